//go:build js && wasm

package main

import (
	"math/bits"
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
)

// The hot exports, key and keys. Neither defers a recover: both check every
// handle and range before they index, and neither allocates, so neither can
// panic. Classic batches go through AddPacked and HasPacked, which on wasm
// hash and probe a group of keys at a time with few calls; one classic key
// goes through AddPacked to add and Has to test (which stops at the first
// unset bit, where HasPacked reads every word of its group); split-block
// filters get a direct call (a case in key, addKey and hasKey); other kinds
// go through the filter interface. A Go call costs more in wasm than natively (arguments and
// results go through the Go stack in linear memory), so key makes as few as
// it can.

// one and oneOut carry a single key through AddPacked, which
// on wasm hash and probe in one function: a call there costs more than the
// slices.
var (
	one    [1]uint32
	oneOut [1]byte
)

// addKey adds k to f, a kind other than classic, and reports whether it
// was new.
func addKey(f filter, k []byte) bool {
	if b, ok := f.(*bloom.BlockedFilter); ok {
		return b.Add(k)
	}
	return f.Add(k)
}

// hasKey reports whether f, a kind other than classic, probably holds k.
func hasKey(f filter, k []byte) bool {
	if b, ok := f.(*bloom.BlockedFilter); ok {
		return b.Has(k)
	}
	return f.Has(k)
}

// key adds (add 1) or tests (add 0) the key scratch[off:off+n] in filter h.
// It returns 1 when the key was new (add) or is probably present (test), 0
// when not, or a negative status.
//
//go:wasmexport key
func key(add, h, off, n int32) int32 {
	f := lookup(h)
	k, ok := span(off, n)
	if f == nil || !ok {
		return badKey(f)
	}
	if c, ok := f.(*bloom.Filter); ok {
		if add == 0 {
			return b2i(c.Has(k)) // stops at the first unset bit; HasPacked reads the k words of a group
		}
		one[0] = uint32(n)
		c.AddPacked(k, one[:], oneOut[:])
		return int32(oneOut[0])
	}
	if add == 1 {
		return b2i(addKey(f, k))
	}
	return b2i(hasKey(f, k))
}

// keys adds (add 1) or tests (add 0) count keys in filter h and writes one
// result byte a key, as key returns it, at scratch[out:]. The keys are the
// text scratch[text:end], back to back; their lengths are count
// little-endian uint32 at scratch[lens:]. With utf16 0 the lengths are in
// bytes. With utf16 1 the text is UTF-8 and the lengths are in UTF-16 code
// units, which is what a JS caller knows of its strings before encoding them
// all with one encodeInto: a 4-byte sequence is two units, any shorter one a
// unit (a lone surrogate arrives as U+FFFD, three bytes, one unit); they are
// turned into byte lengths, in place, before any key is added. It returns
// count, or a negative status. On abi.ErrSplit, nothing has changed: a key ends
// inside a 4-byte sequence (its lone high surrogate and the next key's lone
// low surrogate were joined into one code point), and the caller retries
// the batch key by key.
//
//go:wasmexport keys
func keys(add, h, count, lens, text, end, out, utf16 int32) int32 {
	return batch(h, add == 1, uint32(count), uint32(lens), uint32(text), uint32(end), uint32(out), utf16 == 1)
}

// badKey is the status of a hot call whose filter or key is not valid.
func badKey(f filter) int32 {
	if f == nil {
		return fail(abi.ErrFreed, "edgebloom: the filter was freed")
	}
	return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
}

func batch(h int32, add bool, count, lens, keys, end, out uint32, utf16 bool) int32 {
	f := lookup(h)
	if f == nil {
		return badKey(f)
	}
	n := uint64(len(scratch))
	if uint64(lens)+4*uint64(count) > n || uint64(out)+uint64(count) > n || keys > end || uint64(end) > n {
		return fail(abi.ErrArg, "edgebloom: batch outside the scratch buffer")
	}
	// From here every index is below len(scratch): the loops read through
	// a pointer, without Go's bounds checks.
	base := unsafe.Pointer(unsafe.SliceData(scratch))
	ls := unsafe.Slice((*uint32)(unsafe.Add(base, lens)), count)
	if utf16 {
		off := keys
		for i, l := range ls {
			next := utf8End(base, off, end, l)
			if next > end {
				if next == splitEnd {
					return fail(abi.ErrSplit, "edgebloom: a key ends inside a UTF-8 sequence")
				}
				return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
			}
			ls[i] = next - off
			off = next
		}
	}
	var total uint64
	for _, l := range ls {
		total += uint64(l)
	}
	if total > uint64(end-keys) {
		return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
	}
	text := scratch[keys:end]
	res := scratch[out : out+count]
	switch f := f.(type) {
	case *bloom.Filter:
		if add {
			f.AddPacked(text, ls, res)
		} else {
			f.HasPacked(text, ls, res)
		}
		return int32(count)
	}
	for i, l := range ls {
		k := text[:l:l]
		text = text[l:]
		var r bool
		if add {
			r = addKey(f, k)
		} else {
			r = hasKey(f, k)
		}
		res[i] = byte(b2i(r))
	}
	return int32(count)
}

// splitEnd is what utf8End returns when the key ends inside a 4-byte
// sequence; it is above any end, since scratch is far smaller than 4 GiB.
const splitEnd = ^uint32(0)

// utf8End returns where the UTF-8 text at base+off that holds units UTF-16
// code units ends, or a value above end when it runs past end. The text
// came from TextEncoder, so it is valid UTF-8: a sequence is one unit, or
// two when its lead byte is 0xf0 or above, and continuation bytes
// (10xxxxxx) are none. Words of eight bytes are counted at once while the
// key's end lies beyond them (each turn of a loop goes through the
// function's dispatch loop in Go's wasm, so a byte at a time is slow), then
// bytes one by one.
func utf8End(base unsafe.Pointer, off, end, units uint32) uint32 {
	const hi = 0x8080808080808080
	for end-off >= 8 {
		w := *(*uint64)(unsafe.Add(base, off))
		n := uint32(8)
		if w&hi == 0 {
			if units <= 8 { // ASCII: the next key starts units bytes on
				return off + units
			}
		} else {
			lead := (^w | w<<1) & hi // not a continuation byte
			four := w & (w << 1) & (w << 2) & (w << 3) & hi
			n = uint32(bits.OnesCount64(lead) + bits.OnesCount64(four))
			if n > units && four == 0 {
				// The key ends at the lead byte after its last unit's:
				// drop units lead bits; the lowest left marks it.
				for ; units > 0; units-- {
					lead &= lead - 1
				}
				return off + uint32(bits.TrailingZeros64(lead))/8
			}
		}
		if n >= units {
			break
		}
		units -= n
		off += 8
	}
	for ; off < end; off++ {
		c := *(*byte)(unsafe.Add(base, off))
		switch {
		case c&0xc0 == 0x80: // a continuation byte
		case units == 0:
			return off
		case c >= 0xf0:
			if units < 2 {
				return splitEnd
			}
			units -= 2
		default:
			units--
		}
	}
	if units == 0 {
		return end
	}
	return end + 1
}
