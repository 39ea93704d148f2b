//go:build !wasm

package bloom

// packed adds or tests each key in its shard, one key at a time.
func (r *routed) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	off := 0
	for i := range lens {
		var k []byte
		k, off = packedKey(keys, stride, lens, i, off)
		f := r.fs[r.shard(sum(k, r.route))]
		h := sum(k, f.seed)
		if add {
			out[i] = b2u8(f.add(h))
		} else {
			out[i] = b2u8(f.has(h))
		}
	}
}
