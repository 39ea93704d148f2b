package bloom

// AddPacked adds len(lens) keys that lie back to back in keys, key i being
// lens[i] bytes long, and sets out[i] to 1 when key i was new (Add returned
// true), else 0. It is a batch Add for callers whose keys already sit in one
// buffer, such as the npm module's engine, which gets them from JavaScript
// that way; on wasm it runs the hash and the probes in one loop, without
// the calls that cost most of a key there. It panics when the lengths add
// up to more than len(keys) or out is shorter than lens.
func (f *Filter) AddPacked(keys []byte, lens []uint32, out []byte) {
	checkPacked(keys, lens, out)
	f.addPacked(keys, lens, out)
}

// HasPacked tests the keys laid out as for AddPacked and sets out[i] to 1
// when key i is probably present (Has returned true), else 0. It panics as
// AddPacked does.
func (f *Filter) HasPacked(keys []byte, lens []uint32, out []byte) {
	checkPacked(keys, lens, out)
	f.hasPacked(keys, lens, out)
}

func checkPacked(keys []byte, lens []uint32, out []byte) {
	var total uint64
	for _, n := range lens {
		total += uint64(n)
	}
	if total > uint64(len(keys)) || len(out) < len(lens) {
		panic("bloom: packed keys out of range")
	}
}

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}
