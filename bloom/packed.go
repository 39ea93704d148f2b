package bloom

// addStrided adds len(lens) keys that start every stride bytes: key i is
// keys[i·stride : i·stride+lens[i]], so a caller can write each key straight
// into a slot of its own (the npm module's engine: one encodeInto a key,
// into a view made once), or back to back when stride is 0; it sets out[i]
// to 1 when key i was new (Add returned true), else 0. On wasm it runs the
// hash and the probes in one loop, without the calls that cost most of a
// key there. It panics when a key is longer than stride or runs past keys,
// or out is shorter than lens.
func (f *Filter) addStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, true)
}

// hasStrided tests the keys laid out as for addStrided and sets out[i] to 1
// when key i is probably present (Has returned true), else 0.
func (f *Filter) hasStrided(keys []byte, stride int, lens []uint32, out []byte) {
	checkPacked(keys, stride, lens, out)
	f.packed(keys, stride, lens, out, false)
}

// checkPacked panics unless packedOK.
func checkPacked(keys []byte, stride int, lens []uint32, out []byte) {
	if !packedOK(keys, stride, lens, out) {
		panic("bloom: packed keys out of range")
	}
}

// packedOK reports whether every key of the layout (see addStrided) lies
// inside keys and out has room for every answer. It reads four lengths a
// turn and tests them without a branch, as the npm module's engine checks
// every batch with it, and only with it (a taken branch in Go's wasm code
// is a jump through the function's dispatch loop).
func packedOK(keys []byte, stride int, lens []uint32, out []byte) bool {
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
	return ok && total <= uint64(len(keys))
}

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}
