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

// packedKey returns key i of a layout checked by checkPacked, whose key i-1
// ended at off, and where key i+1 starts.
func packedKey(keys []byte, stride int, lens []uint32, i, off int) (key []byte, next int) {
	n := int(lens[i])
	if stride != 0 {
		off = i * stride
	}
	return keys[off : off+n : off+n], off + n
}
