package bloom

import (
	"os"
	"path/filepath"
	"strings"
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

// TestWriteThroughLinks checks that WriteFile, Create and FileLock.Replace
// on a symbolic link replace the file it names, in its own directory, and
// leave the link a link; a link to nothing makes its target; a loop of
// links is an error that says so.
func TestWriteThroughLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "data", "f.bloom")
	link := filepath.Join(dir, "f.bloom")
	os.Mkdir(filepath.Dir(real), 0o755)
	if err := os.Symlink("data/f.bloom", link); err != nil { // relative, to nothing yet
		t.Fatal(err)
	}
	isLink := func(when string) {
		t.Helper()
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s: the link is gone (%v, %v)", when, fi.Mode(), err)
		}
	}
	ff := must(Create(link, 100, 0.01))
	ff.Add([]byte("a"))
	ff.Close()
	isLink("Create")
	r := must(OpenReadOnly(real))
	if !r.Has([]byte("a")) {
		t.Fatal("Create through a link: the target lacks the key")
	}
	r.Close()
	f := must(New(100, 0.01))
	f.Add([]byte("b"))
	if err := WriteFile(link, f); err != nil {
		t.Fatal(err)
	}
	isLink("WriteFile")
	l := must(LockFile(link))
	c := must(NewCounting(100, 0.01))
	c.Add([]byte("c"))
	if err := l.Replace(c); err != nil {
		t.Fatal(err)
	}
	l.Close()
	isLink("FileLock.Replace")
	if info := must(Inspect(must(os.ReadFile(real))[:HeaderSize], 1<<20)); info.Kind != "counting" {
		t.Errorf("after Replace through a link, the target is a %s filter; want counting", info.Kind)
	}

	loop := filepath.Join(dir, "loop")
	os.Symlink("loop", loop)
	if err := WriteFile(loop, f); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("WriteFile on a loop of links: %v; want an error saying too many levels of links", err)
	}
}
