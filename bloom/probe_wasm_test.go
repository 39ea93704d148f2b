//go:build wasm

package bloom

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestPresentAsm compares the assembly's group probe with Filter.present on
// filters from 1 bit to 10^6, k from 1 to 40 (small m with large k takes
// the walk's rare reduction of y), half full, on groups of 0 to 32 keys.
func TestPresentAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []uint64{1, 2, 3, 7, 63, 64, 65, 100, 1000, 4097, 1_000_003} {
		for _, k := range []uint32{1, 2, 7, 13, 40} {
			f, err := NewWithSize(m, k)
			if err != nil {
				t.Fatal(err)
			}
			for range m / uint64(2*k) {
				f.AddDigest(rng.Uint64())
			}
			var hs [group]uint64
			for round := range 200 {
				n := round % (group + 1)
				for i := range n {
					hs[i] = rng.Uint64()
					if i%3 == 0 {
						f.AddDigest(hs[i])
					}
				}
				got := groupMask(presentAsm(unsafe.SliceData(f.words), f.m, uint64(f.k), &hs[0], n))
				if want := f.present(hs[:n]); got != want {
					t.Fatalf("m %d, k %d, %d keys: presentAsm %#x, present %#x", m, k, n, got, want)
				}
			}
		}
	}
}
