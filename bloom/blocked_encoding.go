// The split-block kind in the binary format (docs/format.md): its header,
// writing and reading a record, and decoding one from untrusted bytes.

package bloom

import (
	"io"
)

func (f *BlockedFilter) header() header {
	return header{
		kind: kindBlocked, m: f.NumBits(), k: 8, count: f.count,
		capacity: f.capacity, fpRate: f.fpRate, payload: 32 * f.n,
	}
}

// EncodedSize returns the length of the encoding MarshalBinary produces:
// 72 bytes more than the Parquet bitset.
func (f *BlockedFilter) EncodedSize() uint64 { return recordSize(32 * f.n) }

// WriteTo writes the filter's encoding to w (see docs/format.md): a header of
// kind 5 whose payload is the Parquet bitset. It implements io.WriterTo.
func (f *BlockedFilter) WriteTo(w io.Writer) (int64, error) {
	return writeRecord(w, f.header(), func(rw *recordWriter) { rw.writeWords(f.words()) })
}

// MarshalBinary returns the filter's encoding. It implements
// encoding.BinaryMarshaler.
func (f *BlockedFilter) MarshalBinary() ([]byte, error) { return marshal(f.EncodedSize(), f.WriteTo) }

// UnmarshalBinary replaces f with the filter encoded in data, which must be
// exactly one encoding of a split-block filter of at most DefaultMaxBits
// bits. On error f is unchanged. It implements encoding.BinaryUnmarshaler.
func (f *BlockedFilter) UnmarshalBinary(data []byte) error {
	g, err := decodeAll(data, DecodeBlocked)
	if err != nil {
		return err
	}
	*f = *g
	return nil
}

// ReadFrom replaces f with the filter read from r, bounded by
// DefaultMaxBits. On error f is unchanged. It implements io.ReaderFrom.
func (f *BlockedFilter) ReadFrom(r io.Reader) (int64, error) {
	cr := &countingReader{r: r}
	g, err := DecodeBlocked(cr, DefaultMaxBits)
	if err != nil {
		return cr.n, err
	}
	*f = *g
	return cr.n, nil
}

// DecodeBlocked reads one split-block filter from r, which may be untrusted,
// as Decode reads a classic one: a filter of more than maxBits bits is
// refused with ErrTooLarge before anything is allocated, memory grows only
// with the bytes that actually arrive, and every problem is an error
// wrapping one of this package's sentinel errors, or io.ErrUnexpectedEOF
// for truncated input. It reads nothing beyond the filter.
func DecodeBlocked(r io.Reader, maxBits uint64) (*BlockedFilter, error) {
	h, words, err := readRecord(r, kindBlocked, maxBits)
	if err != nil {
		return nil, err
	}
	return &BlockedFilter{blocks: blocksOf(words), n: h.m / BlockBits, count: h.count, capacity: h.capacity, fpRate: h.fpRate}, nil
}
