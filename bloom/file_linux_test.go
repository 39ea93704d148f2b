package bloom

import (
	"os"
	"syscall"
	"testing"
)

// TestCreateReserves checks that Create allocates the blocks of its file
// (a sparse file would let a full disk show up as a SIGBUS at the first
// write of a page through the mapping, long after Create succeeded).
func TestCreateReserves(t *testing.T) {
	path := tempPath(t)
	ff := must(Create(path, 1_000_000, 0.01))
	defer ff.Close()
	st := must(os.Stat(path)).Sys().(*syscall.Stat_t)
	if allocated := st.Blocks * 512; allocated < st.Size {
		t.Errorf("Create: %d bytes allocated of the %d-byte file; want all of them", allocated, st.Size)
	}
}

// TestCreateMode checks that a new file gets 0666 less the umask, as
// os.Create gives, and a replaced file keeps its mode.
func TestCreateMode(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	path := tempPath(t)
	must(Create(path, 10, 0.01)).Close()
	if mode := must(os.Stat(path)).Mode().Perm(); mode != 0o640 {
		t.Errorf("new file: mode %o; want 640", mode)
	}
	os.Chmod(path, 0o600)
	if err := WriteFile(path, must(New(10, 0.01))); err != nil {
		t.Fatal(err)
	}
	if mode := must(os.Stat(path)).Mode().Perm(); mode != 0o600 {
		t.Errorf("replaced file: mode %o; want the old file's 600", mode)
	}
}
