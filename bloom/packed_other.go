//go:build !wasm

package bloom

func (f *Filter) addPacked(keys []byte, lens []uint32, out []byte) {
	for i, n := range lens {
		out[i] = b2u8(f.add(sum(keys[:n], f.seed)))
		keys = keys[n:]
	}
}

func (f *Filter) hasPacked(keys []byte, lens []uint32, out []byte) {
	for i, n := range lens {
		out[i] = b2u8(f.has(sum(keys[:n], f.seed)))
		keys = keys[n:]
	}
}
