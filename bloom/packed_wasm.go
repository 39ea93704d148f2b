//go:build wasm

package bloom

import (
	"math/bits"
	"unsafe"
)

// In Go's wasm a call is expensive: arguments and results go through the
// Go stack in linear memory, and the callee checks the stack and can be
// resumed. A key through Add made four calls (Add, xxh64, finish, add),
// about half of the time a key took. packed takes the keys a group at a
// time, as AddMany does: one call of hashGroupAsm (xxh64_wasm.s) hashes the
// group, then its words are read together, so that their cache misses
// overlap, and only then answered and changed in order; checkPacked has
// checked every length, so keys are read through a pointer.

// hashGroup computes XXH64, as xxh64 does, of the keys of lengths ls (at
// most group) that lie from p, back to back (stride 0) or every stride
// bytes, into hs, and returns the address where the next key starts. The
// whole group is one call of hashGroupAsm (xxh64_wasm.s).
func hashGroup(p unsafe.Pointer, ls []uint32, stride int, seed uint64, hs *[group]uint64) unsafe.Pointer {
	return unsafe.Pointer(hashGroupAsm((*byte)(p), unsafe.SliceData(ls), len(ls), stride, seed, &hs[0]))
}

func (f *Filter) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	p := unsafe.Pointer(unsafe.SliceData(keys))
	words, m, k := f.words, f.m, uint64(f.k)
	if len(words) == 0 || k == 0 {
		return // no filter has either; the assembly needs both
	}
	wp := unsafe.SliceData(words)
	var hs [group]uint64
	for o := 0; o < len(lens); o += group {
		ls := lens[o:min(o+group, len(lens))]
		p = hashGroup(p, ls, stride, f.seed, &hs)
		// The group's words are read first, without branches, so that
		// their misses overlap (present, as in AddMany); then each key is
		// answered, and added in order, as add does it (probe_wasm.s).
		var present uint64
		if !add || len(ls) > 1 { // one key alone (the key export) has no misses to overlap
			present = presentAsm(wp, m, k, &hs[0], len(ls))
		}
		if add {
			f.count += addGroupAsm(wp, m, k, &hs[0], len(ls), present, &out[o])
			continue
		}
		for g := range ls {
			out[o+g] = byte(present>>(g&31)) & 1
		}
	}
}

// packed is Filter.packed for the split-block kind: a group is hashed,
// then its blocks are read together, then each key is answered, and added
// in order as addDigest does (blockedGroupAsm).
func (f *BlockedFilter) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	p := unsafe.Pointer(unsafe.SliceData(keys))
	var hs [group]uint64
	for o := 0; o < len(lens); o += group {
		ls := lens[o:min(o+group, len(lens))]
		p = hashGroup(p, ls, stride, 0, &hs)
		f.count += blockedGroupAsm(unsafe.SliceData(f.blocks), f.n, &hs[0], len(ls), add, &out[o])
	}
}

// mergeAll is XXH64's merge of the four lanes.
func mergeAll(v1, v2, v3, v4 uint64) uint64 {
	h := bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
	h = (h^bits.RotateLeft64(v1*prime2, 31)*prime1)*prime1 + prime4
	h = (h^bits.RotateLeft64(v2*prime2, 31)*prime1)*prime1 + prime4
	h = (h^bits.RotateLeft64(v3*prime2, 31)*prime1)*prime1 + prime4
	return (h^bits.RotateLeft64(v4*prime2, 31)*prime1)*prime1 + prime4
}
