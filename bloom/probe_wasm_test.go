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
				f.add(rng.Uint64())
			}
			var hs [group]uint64
			for round := range 200 {
				n := round % (group + 1)
				for i := range n {
					hs[i] = rng.Uint64()
					if i%3 == 0 {
						f.add(hs[i])
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

// TestAddGroupAsm adds groups of keys with the assembly and with
// Filter.add, to two filters that start equal, and compares the answers,
// the counts and the bits; a quarter of the keys repeat an earlier one of
// the group, and present marks some keys as held before the group.
func TestAddGroupAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, m := range []uint64{1, 3, 64, 65, 1000, 4097, 1_000_003} {
		for _, k := range []uint32{1, 7, 40} {
			a, _ := NewWithSize(m, k)
			b, _ := NewWithSize(m, k)
			var hs [group]uint64
			var out [group]byte
			for round := range 300 {
				n := round % (group + 1)
				for i := range n {
					hs[i] = rng.Uint64()
					if i > 0 && rng.IntN(4) == 0 {
						hs[i] = hs[rng.IntN(i)]
					}
				}
				present := a.present(hs[:n])
				fresh := addGroupAsm(unsafe.SliceData(a.words), a.m, uint64(a.k), &hs[0], n, uint64(present), &out[0])
				var want uint64
				for i, h := range hs[:n] {
					r := present>>i&1 == 0 && b.add(h)
					if out[i] != b2u8(r) {
						t.Fatalf("m %d, k %d, key %d of %d: addGroupAsm says %d, add %v", m, k, i, n, out[i], r)
					}
					want += uint64(b2u8(r))
				}
				if fresh != want || !a.Equal(b) {
					t.Fatalf("m %d, k %d, %d keys: %d new (want %d), same bits %v", m, k, n, fresh, want, a.Equal(b))
				}
			}
		}
	}
}

// TestBlockedGroupAsm answers and adds groups of keys with the assembly and
// with HasDigest and AddDigest, on two split-block filters that start
// equal, and compares the answers, the counts and the bits; a quarter of
// the keys repeat an earlier one of the group.
func TestBlockedGroupAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, blocks := range []uint64{1, 2, 3, 1000, 100_003} {
		a, _ := NewBlockedWithSize(blocks)
		b, _ := NewBlockedWithSize(blocks)
		var hs [group]uint64
		var out [group]byte
		for round := range 400 {
			n := round % (group + 1)
			for i := range n {
				hs[i] = rng.Uint64()
				if i > 0 && rng.IntN(4) == 0 {
					hs[i] = hs[rng.IntN(i)]
				}
			}
			add := round%2 == 0
			fresh := blockedGroupAsm(unsafe.SliceData(a.blocks), a.n, &hs[0], n, add, &out[0])
			var want uint64
			for i, h := range hs[:n] {
				var r bool
				if add {
					r = b.addDigest(h)
				} else {
					r = b.hasDigest(h)
				}
				if out[i] != b2u8(r) {
					t.Fatalf("%d blocks, add %v, key %d of %d: blockedGroupAsm says %d, want %v", blocks, add, i, n, out[i], r)
				}
				if add {
					want += uint64(b2u8(r))
				}
			}
			if fresh != want || !a.Equal(b) {
				t.Fatalf("%d blocks, %d keys: %d new (want %d), same bits %v", blocks, n, fresh, want, a.Equal(b))
			}
		}
	}
}
