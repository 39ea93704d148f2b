package bloom

import (
	"io"
	"strconv"
)

// This file serves classic filters whose bits live outside a Filter, such
// as the Redis strings of package redisfilter: the positions of a key
// without a bitset, and the encoding of a payload read from elsewhere. Both
// are the frozen scheme and format of docs/format.md, not a copy of them.

// AppendLocations appends to dst the k bit positions of key in a classic
// filter of m bits with the given hash seed, in probe order, and returns the
// extended slice. They are the positions that Locations returns for a
// Filter with those parameters (and that its Add sets), computed without
// one, so that a filter kept elsewhere sets the same bits. AppendLocations
// panics if m or k is outside the range NewWithSeed accepts.
func AppendLocations(dst []uint64, key []byte, m uint64, k uint32, seed uint64) []uint64 {
	if err := checkSize(m, k); err != nil {
		panic(err)
	}
	return appendLocations(dst, sum(key, seed), m, k)
}

// WriteClassic writes to w the encoding of a classic filter whose payload it
// reads from payload: exactly 8·ceil(m/64) bytes, bit i of the filter in bit
// i%8 of byte i/8, as docs/format.md lays it out. info gives the header:
// Seed, Bits (m), Hashes (k), Count, Capacity and FPRate; Kind must be
// "classic" or empty, Layers 0 and Dirty false. The output is what
// MarshalBinary writes for a Filter with those fields and bits, and Decode
// reads it back.
//
// Arguments out of range are reported as an *ArgError before anything is
// written. The payload is read in chunks of at most 1 MiB, so memory does
// not grow with m. A payload that ends early gives io.ErrUnexpectedEOF, and
// one with bits set beyond m an error wrapping ErrCorrupt; the header and
// part of the payload have been written to w by then. WriteClassic returns
// the number of bytes written.
func WriteClassic(w io.Writer, info Info, payload io.Reader) (int64, error) {
	if err := checkSize(info.Bits, info.Hashes); err != nil {
		return 0, err
	}
	switch {
	case info.Kind != "" && info.Kind != "classic":
		return 0, argError("info.Kind", `must be "classic" or empty, got `+strconv.Quote(info.Kind))
	case info.Layers != 0:
		return 0, argError("info.Layers", "must be 0 for a classic filter")
	case info.Dirty:
		return 0, argError("info.Dirty", "must be false: only a file-backed filter is dirty")
	case !(info.FPRate >= 0 && info.FPRate < 1) || (info.FPRate == 0) != (info.Capacity == 0):
		return 0, argError("info.FPRate", "must be in [0, 1), and 0 exactly when info.Capacity is 0")
	}
	n := 8 * wordsFor(info.Bits)
	h := header{
		kind: kindClassic, seed: info.Seed, m: info.Bits, k: info.Hashes, count: info.Count,
		capacity: info.Capacity, fpRate: info.FPRate, payload: n,
	}
	return writeRecord(w, h, func(rw *recordWriter) {
		buf := make([]byte, min(n, 1<<20))
		for left := n; left > 0 && rw.err == nil; {
			b := buf[:min(left, uint64(len(buf)))]
			if _, err := io.ReadFull(payload, b); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				rw.err = err
				return
			}
			left -= uint64(len(b))
			if left == 0 {
				last := wire.Uint64(b[len(b)-8:])
				if err := checkPadding(kindClassic, info.Bits, []uint64{last}); err != nil {
					rw.err = err
					return
				}
			}
			rw.Write(b)
		}
	})
}
