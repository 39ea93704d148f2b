//go:build !wasm

package bloom

func (f *Filter) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	off := 0
	for i := range lens {
		var k []byte
		k, off = packedKey(keys, stride, lens, i, off)
		h := sum(k, f.seed)
		if add {
			out[i] = b2u8(f.add(h))
		} else {
			out[i] = b2u8(f.has(h))
		}
	}
}

func (f *BlockedFilter) packed(keys []byte, stride int, lens []uint32, out []byte, add bool) {
	off := 0
	for i := range lens {
		var k []byte
		k, off = packedKey(keys, stride, lens, i, off)
		h := xxh64Seed0(k)
		if add {
			out[i] = b2u8(f.addDigest(h))
		} else {
			out[i] = b2u8(f.hasDigest(h))
		}
	}
}
