package bloom

import (
	"errors"
	"io"
	"math"

	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/internal/engine"
)

// The encoding, described field by field in docs/format.md:
//
//	offset size field
//	0      4    magic "EBLM"
//	4      1    format version, 1
//	5      1    kind: 1 classic, 2 counting, 3 scalable, 4 window, 5 blocked
//	6      1    hash scheme: 1 (HashXXH64), 2 (HashParquet) for blocked
//	7      1    flags: 0, or 1 (dirty) in a classic file being written
//	8      8    seed (0 for blocked)
//	16     8    m: bits, counters, or the total bits of all layers
//	24     4    k (0 for scalable, 8 for blocked)
//	28     4    parts: number of layers (scalable) or generations (window), else 0
//	32     8    count
//	40     8    capacity, 0 when unknown
//	48     8    target false-positive rate, IEEE 754 binary64, 0 when unknown
//	56     8    payload length in bytes
//	64     n    payload
//	64+n   8    XXH64 (seed 0) of bytes [0, 64+n)
//
// Every integer is little-endian.
const (
	magic         = "EBLM"
	formatVersion = 1
	headerSize    = abi.HeaderSize
	checksumSize  = abi.ChecksumSize

	kindClassic  = abi.KindClassic
	kindCounting = abi.KindCounting
	kindScalable = abi.KindScalable
	kindWindow   = abi.KindWindow
	kindBlocked  = abi.KindBlocked

	// flagDirty marks a file-backed classic filter whose payload may be
	// newer than its count and checksum: set before the first change after
	// a Sync, cleared by the next Sync. Only Open and OpenReadOnly accept
	// it; the decoders of bytes refuse it with ErrChecksum.
	flagDirty = 1
)

// DefaultMaxBits is the size bound that UnmarshalBinary and ReadFrom apply:
// 2^33 bits, a 1 GiB bitset. Use Decode to choose another bound.
const DefaultMaxBits = 1 << 33

type header struct {
	kind     uint8
	flags    uint8
	seed     uint64
	m        uint64
	k        uint32
	parts    uint32
	count    uint64
	capacity uint64
	fpRate   float64
	payload  uint64
}

func (h *header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, magic)
	b[4], b[5], b[6], b[7] = formatVersion, h.kind, hashScheme(h.kind), h.flags
	wire.PutUint64(b[8:], h.seed)
	wire.PutUint64(b[16:], h.m)
	wire.PutUint32(b[24:], h.k)
	wire.PutUint32(b[28:], h.parts)
	wire.PutUint64(b[32:], h.count)
	wire.PutUint64(b[40:], h.capacity)
	wire.PutUint64(b[48:], math.Float64bits(h.fpRate))
	wire.PutUint64(b[56:], h.payload)
	return b
}

// hashScheme returns the hash scheme of a kind: split-block filters map keys
// to bits as Parquet does, every other kind by HashXXH64.
func hashScheme(kind uint8) uint8 {
	if kind == kindBlocked {
		return HashParquet
	}
	return HashXXH64
}

// decodeHeader checks everything that can be checked from the header alone:
// identity, ranges, and the payload length that m implies. It allocates
// nothing, so it runs before the payload is read.
func decodeHeader(b []byte, want uint8, maxBits uint64) (header, error) {
	h := header{
		kind:     b[5],
		flags:    b[7],
		seed:     wire.Uint64(b[8:]),
		m:        wire.Uint64(b[16:]),
		k:        wire.Uint32(b[24:]),
		parts:    wire.Uint32(b[28:]),
		count:    wire.Uint64(b[32:]),
		capacity: wire.Uint64(b[40:]),
		fpRate:   math.Float64frombits(wire.Uint64(b[48:])),
		payload:  wire.Uint64(b[56:]),
	}
	switch {
	case string(b[:4]) != magic:
		return h, ErrNotFilter
	case b[4] != formatVersion:
		return h, wrap(ErrVersion, "format version "+utoa(uint64(b[4])))
	case b[6] != HashXXH64 && b[6] != HashParquet:
		return h, wrap(ErrVersion, "hash scheme "+utoa(uint64(b[6])))
	case h.flags&^flagDirty != 0 || h.flags != 0 && h.kind != kindClassic:
		return h, wrap(ErrCorrupt, "unknown flags")
	case h.kind != want:
		return h, wrap(ErrKind, "found "+kindName(h.kind)+", want "+kindName(want))
	case h.kind <= kindBlocked && b[6] != hashScheme(h.kind):
		return h, wrap(ErrVersion, "hash scheme "+utoa(uint64(b[6]))+" for a "+kindName(h.kind)+" filter")
	case h.m == 0 || h.m > MaxBits:
		return h, wrap(ErrCorrupt, "m out of range")
	case h.m > maxBits:
		return h, wrap(ErrTooLarge, utoa(h.m)+" bits, bound "+utoa(maxBits))
	case math.IsNaN(h.fpRate) || h.fpRate < 0 || h.fpRate >= 1 || (h.fpRate == 0) != (h.capacity == 0):
		return h, wrap(ErrCorrupt, "capacity and target rate out of range")
	case h.count > MaxCountPerBit*h.m: // m ≤ MaxBits here, so no overflow
		// More keys than the bits can have counted (see MaxCountPerBit);
		// refused before the payload is read.
		return h, wrap(ErrCorrupt, "count "+utoa(h.count)+" is more than "+utoa(h.m)+" bits can hold")
	}
	switch h.kind {
	case kindClassic, kindCounting:
		switch {
		case h.k == 0 || h.k > MaxHashes:
			return h, wrap(ErrCorrupt, "k out of range")
		case h.parts != 0:
			return h, wrap(ErrCorrupt, "parts must be 0")
		case h.kind == kindCounting && h.count > math.MaxInt64:
			// CountingFilter keeps a signed count; a larger one would not
			// encode back to the same bytes.
			return h, wrap(ErrCorrupt, "count out of range")
		case h.payload != 8*payloadWords(h.kind, h.m):
			return h, wrap(ErrCorrupt, "payload length does not match m")
		}
	case kindScalable:
		switch {
		case h.k != 0:
			return h, wrap(ErrCorrupt, "k must be 0")
		case h.parts == 0 || uint64(h.parts) > h.m || h.parts > MaxLayers:
			return h, wrap(ErrCorrupt, "layer count out of range (at most MaxLayers, 64)")
		case h.capacity == 0:
			return h, wrap(ErrCorrupt, "capacity missing")
		// Every layer is at least one header, one word and one checksum, and
		// the payload can hold no more bits than its bytes.
		case h.payload < uint64(h.parts)*(headerSize+8+checksumSize) || h.payload > uint64(h.parts)*(headerSize+checksumSize)+h.m/8+8*uint64(h.parts):
			return h, wrap(ErrCorrupt, "payload length does not match m")
		}
	case kindWindow:
		// Generations are classic filters of equal size, so the header
		// determines the payload length exactly.
		switch {
		case h.k == 0 || h.k > MaxHashes:
			return h, wrap(ErrCorrupt, "k out of range")
		case h.parts == 0 || h.parts > MaxGenerations || h.m%uint64(h.parts) != 0:
			return h, wrap(ErrCorrupt, "generation count out of range (at most MaxGenerations, 4096)")
		case h.capacity == 0:
			return h, wrap(ErrCorrupt, "capacity missing")
		case h.payload != uint64(h.parts)*recordSize(8*payloadWords(kindClassic, h.m/uint64(h.parts))):
			return h, wrap(ErrCorrupt, "payload length does not match m")
		}
	case kindBlocked:
		// The payload is a Parquet bitset: whole blocks, 8 bits a key.
		switch {
		case h.m%BlockBits != 0:
			return h, wrap(ErrCorrupt, "m is not a multiple of 256")
		case h.k != 8:
			return h, wrap(ErrCorrupt, "k must be 8")
		case h.seed != 0:
			return h, wrap(ErrCorrupt, "seed must be 0")
		case h.parts != 0:
			return h, wrap(ErrCorrupt, "parts must be 0")
		case h.payload != h.m/8:
			return h, wrap(ErrCorrupt, "payload length does not match m")
		}
	default:
		return h, wrap(ErrKind, "unknown "+kindName(h.kind))
	}
	return h, nil
}

func kindName(k uint8) string {
	switch k {
	case kindClassic:
		return "classic"
	case kindCounting:
		return "counting"
	case kindScalable:
		return "scalable"
	case kindWindow:
		return "window"
	case kindBlocked:
		return "blocked"
	}
	return "kind " + utoa(uint64(k))
}

// payloadWords is the number of 64-bit words that hold m bits or counters.
func payloadWords(kind uint8, m uint64) uint64 {
	if kind == kindCounting {
		return (m + 15) / 16
	}
	return (m + 63) / 64
}

// A recordWriter writes to w and hashes what it writes.
type recordWriter struct {
	w   io.Writer
	d   *checksum
	n   int64
	buf []byte
	err error
}

func newRecordWriter(w io.Writer) *recordWriter { return &recordWriter{w: w, d: newChecksum()} }

func (rw *recordWriter) Write(b []byte) (int, error) {
	if rw.err != nil {
		return 0, rw.err
	}
	rw.d.Write(b)
	n, err := rw.w.Write(b)
	rw.n += int64(n)
	rw.err = err
	return n, err
}

// writeWords writes words little-endian through a bounded buffer, so
// encoding a large filter does not hold a second copy of it.
func (rw *recordWriter) writeWords(words []uint64) {
	const chunk = 8192
	if rw.buf == nil {
		rw.buf = make([]byte, 8*min(len(words), chunk))
	}
	for len(words) > 0 && rw.err == nil {
		n := min(len(words), len(rw.buf)/8)
		for i := range words[:n] {
			// load64: a SyncFilter may take Adds while it is written.
			wire.PutUint64(rw.buf[8*i:], load64(&words[i]))
		}
		rw.Write(rw.buf[:8*n])
		words = words[n:]
	}
}

// writeRecord writes a header, the payload written by body, and the checksum
// of both. It returns the bytes written.
func writeRecord(w io.Writer, h header, body func(rw *recordWriter)) (int64, error) {
	rw := newRecordWriter(w)
	rw.Write(h.encode())
	body(rw)
	if rw.err == nil {
		var sum [checksumSize]byte
		wire.PutUint64(sum[:], rw.d.Sum64())
		n, err := w.Write(sum[:])
		rw.n += int64(n)
		rw.err = err
	}
	return rw.n, rw.err
}

func recordSize(payload uint64) uint64 { return headerSize + payload + checksumSize }

// A recordReader reads from r and hashes what it reads.
type recordReader struct {
	r io.Reader
	d *checksum
}

// readFull reads len(b) bytes; any shortfall is io.ErrUnexpectedEOF.
func (rr *recordReader) readFull(b []byte) error {
	if _, err := io.ReadFull(rr.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	rr.d.Write(b)
	return nil
}

// readWords reads n little-endian words. The slice grows with the bytes that
// actually arrive, so a header that promises more than the input holds
// costs at most about twice what the input held.
func (rr *recordReader) readWords(n uint64) ([]uint64, error) {
	const chunk = 1 << 17 // words: 1 MiB
	words := make([]uint64, 0, min(n, chunk))
	buf := make([]byte, 8*min(n, chunk))
	for uint64(len(words)) < n {
		c := min(n-uint64(len(words)), chunk)
		b := buf[:8*c]
		if err := rr.readFull(b); err != nil {
			return nil, err
		}
		if uint64(cap(words)-len(words)) < c {
			grown := make([]uint64, len(words), min(n, max(2*uint64(cap(words)), uint64(len(words))+c)))
			copy(grown, words)
			words = grown
		}
		l := uint64(len(words))
		words = words[:l+c]
		putWords(words[l:], b)
	}
	return words, nil
}

// verify reads the checksum and compares it with the hash of what was read.
func (rr *recordReader) verify() error {
	want := rr.d.Sum64()
	var b [checksumSize]byte
	if _, err := io.ReadFull(rr.r, b[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if wire.Uint64(b[:]) != want {
		return ErrChecksum
	}
	return nil
}

// readHeader reads and checks one header of kind want, and returns the
// reader that hashes the rest of the record.
func readHeader(r io.Reader, want uint8, maxBits uint64) (*recordReader, header, error) {
	rr := &recordReader{r: r, d: newChecksum()}
	var hb [headerSize]byte
	if err := rr.readFull(hb[:]); err != nil {
		return nil, header{}, err
	}
	h, err := decodeHeader(hb[:], want, maxBits)
	return rr, h, err
}

// readRecord reads and checks one header of kind want, then the payload of
// kinds that are a plain array of words, then the checksum.
func readRecord(r io.Reader, want uint8, maxBits uint64) (header, []uint64, error) {
	rr, h, err := readHeader(r, want, maxBits)
	if err != nil {
		return h, nil, err
	}
	words := engine.Payload
	if uint64(len(words)) == h.payload/8 {
		hashPayload(rr.d, words)
	} else if words, err = rr.readWords(h.payload / 8); err != nil {
		return h, nil, err
	}
	if err := rr.verify(); err != nil {
		return h, nil, err
	}
	if h.flags&flagDirty != 0 {
		return h, nil, wrap(ErrChecksum, "the file was changed after its last Sync; bloom.Open repairs it")
	}
	if err := checkPadding(h.kind, h.m, words); err != nil {
		return h, nil, err
	}
	return h, words, nil
}

// checkPadding rejects set bits beyond m, so that each filter has exactly one
// encoding and Equal on decoded filters means equal bytes.
func checkPadding(kind uint8, m uint64, words []uint64) error {
	per := uint64(64)
	if kind == kindCounting {
		per = 16
	}
	used := m % per
	if used == 0 {
		return nil
	}
	bitsUsed := used * (64 / per)
	if words[len(words)-1]>>bitsUsed != 0 {
		return wrap(ErrCorrupt, "bits set beyond m")
	}
	return nil
}

// marshal encodes through w's WriteTo into a buffer of exactly the right size.
func marshal(size uint64, writeTo func(io.Writer) (int64, error)) ([]byte, error) {
	buf := byteWriter{make([]byte, 0, size)}
	if _, err := writeTo(&buf); err != nil {
		return nil, err
	}
	return buf.b, nil
}

func (f *Filter) header() header {
	return header{
		kind: kindClassic, seed: f.seed, m: f.m, k: f.k, count: f.Count(),
		capacity: f.capacity, fpRate: f.fpRate, payload: 8 * uint64(len(f.words)),
	}
}

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (f *Filter) EncodedSize() uint64 { return recordSize(8 * uint64(len(f.words))) }

// WriteTo writes the filter's encoding to w (see docs/format.md). It
// implements io.WriterTo.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	return writeRecord(w, f.header(), func(rw *recordWriter) { rw.writeWords(f.words) })
}

// MarshalBinary returns the filter's encoding. It implements
// encoding.BinaryMarshaler.
func (f *Filter) MarshalBinary() ([]byte, error) { return marshal(f.EncodedSize(), f.WriteTo) }

// UnmarshalBinary replaces f with the filter encoded in data, which must be
// exactly one encoding of a classic filter of at most DefaultMaxBits bits. On
// error f is unchanged. It implements encoding.BinaryUnmarshaler.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := decodeAll(data, Decode)
	if err != nil {
		return err
	}
	f.set(g)
	return nil
}

// decodeAll decodes data, which must hold exactly one encoding, with the
// bound DefaultMaxBits.
func decodeAll[T any](data []byte, decode func(io.Reader, uint64) (T, error)) (T, error) {
	r := &byteReader{data}
	g, err := decode(r, DefaultMaxBits)
	if err == nil && len(r.b) != 0 {
		err = wrap(ErrCorrupt, "trailing bytes after the filter")
	}
	return g, err
}

// ReadFrom replaces f with the filter read from r, bounded by
// DefaultMaxBits. On error f is unchanged. It implements io.ReaderFrom.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	cr := &countingReader{r: r}
	g, err := Decode(cr, DefaultMaxBits)
	if err != nil {
		return cr.n, err
	}
	f.set(g)
	return cr.n, nil
}

func (f *Filter) set(g *Filter) {
	f.words, f.m, f.k, f.seed = g.words, g.m, g.k, g.seed
	f.capacity, f.fpRate = g.capacity, g.fpRate
	f.count = g.count
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// Decode reads one classic filter from r, which may be untrusted. It checks
// the header before reading further: a filter of more than maxBits bits is
// refused with ErrTooLarge before anything is allocated, and memory grows
// only with the bytes that actually arrive. Every other problem is an error
// wrapping one of this package's sentinel errors, or io.ErrUnexpectedEOF for
// truncated input; Decode never panics. It reads nothing beyond the filter.
func Decode(r io.Reader, maxBits uint64) (*Filter, error) {
	h, words, err := readRecord(r, kindClassic, maxBits)
	if err != nil {
		return nil, err
	}
	return &Filter{count: h.count, words: words, m: h.m, k: h.k, seed: h.seed, capacity: h.capacity, fpRate: h.fpRate}, nil
}

// readParts reads a record of kind want whose payload is h.parts classic
// records, each of h's seed and accepted by fits, that add up to h's m and
// count. It fills in h as soon as the header is read. (Returning the header
// instead made the npm module's wasm larger: docs/size.md, "What each
// choice saves".)
func readParts(r io.Reader, want uint8, maxBits uint64, h *header, fits func(*Filter) bool) ([]*Filter, error) {
	rr, hh, err := readHeader(r, want, maxBits)
	*h = hh
	if err != nil {
		return nil, err
	}
	// Parts are read through a reader that feeds the outer checksum too.
	body := &countingReader{r: io.TeeReader(io.LimitReader(r, int64(h.payload)), rr.d)}
	var parts []*Filter
	var bits, count uint64
	for i := uint32(0); i < h.parts; i++ {
		p, err := Decode(body, h.m-bits)
		switch {
		case errors.Is(err, ErrTooLarge):
			return nil, wrap(ErrCorrupt, "layers hold more bits than the header says")
		case err == io.ErrUnexpectedEOF && uint64(body.n) == h.payload:
			// The input did not end: the parts run past the payload length.
			return nil, wrap(ErrCorrupt, "layers run past the payload length")
		case err != nil:
			return nil, err
		case p.seed != h.seed || !fits(p):
			return nil, wrap(ErrCorrupt, "layer does not belong to this filter")
		}
		bits += p.m
		count += p.Count()
		parts = append(parts, p)
	}
	switch {
	case bits != h.m || count != h.count:
		return nil, wrap(ErrCorrupt, "layers do not add up to the header")
	case uint64(body.n) != h.payload:
		return nil, wrap(ErrCorrupt, "payload length does not match the layers")
	}
	return parts, rr.verify()
}
