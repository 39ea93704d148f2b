//go:build wasm

package bloom

import "unsafe"

// packed is Filter.packed for a sharded filter: a group is hashed twice,
// to route its keys and for their shards (one call of hashGroupAsm each),
// then each key is answered, or added in order, in its shard (presentAsm
// and addGroupAsm of one key), so that a key repeated in the group is new
// only the first time. A batch of one key to test is the npm module's has.
func (r *routed) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	p := unsafe.Pointer(unsafe.SliceData(keys))
	var route, hs [group]uint64
	for o := 0; o < len(lens); o += group {
		ls := lens[o:min(o+group, len(lens))]
		hashGroup(p, ls, stride, r.route, &route)
		p = hashGroup(p, ls, stride, r.seed, &hs)
		for i := range ls {
			f := r.fs[r.shard(route[i])]
			wp, k := unsafe.SliceData(f.words), uint64(f.k)
			switch {
			case add:
				f.count += addGroupAsm(wp, f.m, k, &hs[i], 1, 0, &out[o+i])
			case len(lens) == 1: // one key alone stops at its first unset bit, as Has does
				out[o] = b2u8(f.has(hs[0]))
			default:
				out[o+i] = byte(presentAsm(wp, f.m, k, &hs[i], 1))
			}
		}
	}
}
