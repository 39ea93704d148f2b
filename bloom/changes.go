package bloom

import "io"

// This file lets a classic filter be kept elsewhere (a database, a log)
// at the cost of what changes rather than of its size: an add reports the
// bits it set, those bits can be set again on another copy, and the payload
// can be read and written by byte range without encoding the whole filter.

// AddChanges adds key, as Add does, and appends to dst the positions of the
// bits the add changed from 0 to 1, in probe order, each once. It returns the
// extended slice and whether the key was new (whether any bit changed). A
// key already present appends nothing.
func (f *Filter) AddChanges(key []byte, dst []uint64) ([]uint64, bool) {
	n := len(dst)
	all := appendLocations(dst, sum(key, f.seed), f.m, f.k)
	// Kept in place: the i-th position read is never behind the next write.
	dst = all[:n]
	for _, p := range all[n:] {
		if w, b := f.words[p>>6], uint64(1)<<(p&63); w&b == 0 {
			f.words[p>>6] = w | b
			dst = append(dst, p)
		}
	}
	fresh := len(dst) > n
	if fresh {
		f.count++
	}
	return dst, fresh
}

// ApplyChanges sets the bits at positions, as recorded by AddChanges, and
// sets Count to count. Replaying the changes of a sequence of adds, with the
// count after the last, on a copy of the filter from before them gives the
// filter after them; replaying them twice changes nothing more. A position
// of m or more is an *ArgError, and then nothing is changed.
func (f *Filter) ApplyChanges(positions []uint64, count uint64) error {
	for _, p := range positions {
		if p >= f.m {
			return argError("positions", "each must be below m = "+utoa(f.m)+", got "+utoa(p))
		}
	}
	for _, p := range positions {
		f.words[p>>6] |= 1 << (p & 63)
	}
	f.count = count
	return nil
}

// PayloadSize returns the length of the filter's payload in bytes: its
// encoding less the header and the checksum.
func (f *Filter) PayloadSize() uint64 { return 8 * uint64(len(f.words)) }

// ReadAt copies the bytes of the filter's encoding (what MarshalBinary
// returns) from offset off into p, without encoding the filter: the header
// from the parameters, the payload straight from the bits, and the checksum,
// when the range reaches it, by hashing the header and the bits without a
// copy of them. It implements io.ReaderAt: a read that reaches the end of the
// encoding returns io.EOF with the bytes it read.
func (f *Filter) ReadAt(p []byte, off int64) (int, error) {
	size := f.EncodedSize()
	if off < 0 {
		return 0, argError("off", "must not be negative")
	}
	a := uint64(off)
	b := min(a+uint64(len(p)), size)
	if a >= size {
		return 0, io.EOF
	}
	payloadEnd := size - checksumSize
	h := f.header()
	var ends [headerSize + checksumSize]byte // the header, then the checksum
	copy(ends[:], h.encode())
	if b > payloadEnd {
		d := newChecksum()
		d.Write(ends[:headerSize])
		hashPayload(d, f.words)
		wire.PutUint64(ends[headerSize:], d.Sum64())
	}
	if a < headerSize {
		copy(p, ends[a:min(b, headerSize)])
	}
	if pa, pb := max(a, headerSize), min(b, payloadEnd); pa < pb {
		copyPayload(p[pa-a:pb-a], f.words, pa-headerSize)
	}
	if b > payloadEnd {
		s := max(a, payloadEnd)
		copy(p[s-a:b-a], ends[headerSize+s-payloadEnd:])
	}
	if n := int(b - a); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

// WritePayloadAt replaces the payload's bytes from offset off with p (the
// bytes of the encoding from HeaderSize+off, as ReadAt reads them); Count is unchanged. A range outside the
// payload, or bits set beyond m, is an error (an *ArgError, or one wrapping
// ErrCorrupt), and then nothing is changed. It implements io.WriterAt.
func (f *Filter) WritePayloadAt(p []byte, off int64) (int, error) {
	size := int64(f.PayloadSize())
	if off < 0 || off > size || int64(len(p)) > size-off {
		return 0, argError("off", "the range must lie inside the payload of "+utoa(uint64(size))+" bytes")
	}
	// The last word's padding: bits m and above must stay clear.
	last := uint64(len(f.words) - 1)
	if end, used := uint64(off)+uint64(len(p)), f.m%64; used != 0 && end > 8*last {
		w := f.words[last]
		for j := max(uint64(off), 8*last); j < end; j++ {
			shift := 8 * (j % 8)
			w = w&^(0xff<<shift) | uint64(p[j-uint64(off)])<<shift
		}
		if w>>used != 0 {
			return 0, wrap(ErrCorrupt, "bits set beyond m")
		}
	}
	setPayload(f.words, p, uint64(off))
	return len(p), nil
}
