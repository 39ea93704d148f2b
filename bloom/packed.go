package bloom

// AddPacked adds len(lens) keys that lie back to back in keys, key i being
// lens[i] bytes long, and sets out[i] to 1 when key i was new (Add returned
// true), else 0. It is a batch Add for callers whose keys already sit in one
// buffer, such as the npm module's engine, which gets them from JavaScript
// that way; on wasm it runs the hash and the probes in one loop, without
// the calls that cost most of a key there. It panics when the lengths add
// up to more than len(keys) or out is shorter than lens.
func (f *Filter) AddPacked(keys []byte, lens []uint32, out []byte) { f.AddStrided(keys, 0, lens, out) }

// HasPacked tests the keys laid out as for AddPacked and sets out[i] to 1
// when key i is probably present (Has returned true), else 0. It panics as
// AddPacked does.
func (f *Filter) HasPacked(keys []byte, lens []uint32, out []byte) { f.HasStrided(keys, 0, lens, out) }

// AddStrided is AddPacked for keys that start every stride bytes: key i is
// keys[i·stride : i·stride+lens[i]], so a caller can write each key straight
// into a slot of its own (the npm module's engine: one encodeInto a key,
// into a view made once). A stride of 0 means back to back, as AddPacked.
// It panics when a key is longer than stride or runs past keys, or out is
// shorter than lens.
func (f *Filter) AddStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, true)
}

// HasStrided tests the keys laid out as for AddStrided, as HasPacked does.
func (f *Filter) HasStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, false)
}

// AddPacked is Filter.AddPacked for the split-block kind.
func (f *BlockedFilter) AddPacked(keys []byte, lens []uint32, out []byte) {
	f.AddStrided(keys, 0, lens, out)
}

// HasPacked is Filter.HasPacked for the split-block kind.
func (f *BlockedFilter) HasPacked(keys []byte, lens []uint32, out []byte) {
	f.HasStrided(keys, 0, lens, out)
}

// AddStrided is Filter.AddStrided for the split-block kind.
func (f *BlockedFilter) AddStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, true)
}

// HasStrided is Filter.HasStrided for the split-block kind.
func (f *BlockedFilter) HasStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, false)
}

// checkPacked panics unless every key of the layout (see AddStrided) lies
// inside keys and out has room for every answer. It reads four lengths a
// turn and tests them without a branch, as the npm module's engine checks
// every batch with it (a taken branch in Go's wasm code is a jump through
// the function's dispatch loop).
func checkPacked(keys []byte, stride int, lens []uint32, out []byte) {
	var total, above uint64 // bit 63 of above set once a length was above stride
	s := uint64(stride)
	rest := lens
	for ; len(rest) >= 4; rest = rest[4:] {
		a, b, c, d := uint64(rest[0]), uint64(rest[1]), uint64(rest[2]), uint64(rest[3])
		total += a + b + c + d
		above |= (s - a) | (s - b) | (s - c) | (s - d)
	}
	for _, n := range rest {
		total += uint64(n)
		above |= s - uint64(n)
	}
	ok := len(out) >= len(lens) && stride >= 0
	if stride != 0 && len(lens) > 0 {
		ok = ok && above>>63 == 0
		total = uint64(len(lens)-1)*s + uint64(lens[len(lens)-1])
	}
	if !ok || total > uint64(len(keys)) {
		panic("bloom: packed keys out of range")
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

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}
