// Making a body valid UTF-8 the way a JS runtime does. A key is hashed as
// its UTF-8 bytes, and the same key must set the same bits whether it came
// through this front, the npm module or a shard's JS: so ill-formed bytes
// are replaced exactly as TextDecoder replaces them, not as encoding/json
// would.

package main

import (
	"unicode/utf8"
)

// validUTF8 returns b with every ill-formed UTF-8 sequence replaced by
// U+FFFD the way the WHATWG Encoding Standard's decoder (TextDecoder, and
// so every JS runtime reading the same bytes) replaces it: one U+FFFD for
// each maximal subpart of an ill-formed sequence (Unicode 16, §3.9.6), so
// "e\xE2\x82z" becomes "e\uFFFDz" and "\xED\xA0\x80" (a surrogate
// encoded as UTF-8) three U+FFFD. encoding/json alone would replace byte
// by byte, which differs from JS for a truncated sequence. A JSON escape of
// a lone surrogate ("\ud800") becomes U+FFFD in encoding/json, as in
// TextEncoder. b itself is returned when it is valid.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += illFormedLen(b[i:])
	}
	return out
}

// illFormedLen returns the length of the maximal subpart of the ill-formed
// sequence that b starts with: its lead byte and the continuation bytes
// that could still have completed it (Unicode 16, Table 3-7).
func illFormedLen(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}
