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
