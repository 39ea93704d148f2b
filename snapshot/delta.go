package snapshot

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
)

// A delta carries the bits a service filter set since a copy's cursor, so
// that a local copy (a plain filter or a Sharded container loaded from the
// service's snapshot) can follow the service without downloading the whole
// snapshot again; a shard whose changes would take more bytes than the
// shard itself comes whole instead. docs/format.md ("Deltas") documents it
// field by field; little-endian:
//
//	offset  size  field
//	0       4     magic "EBDL"
//	4       1     delta version, 2 (readers read 1 too)
//	5       1     kind of the shards, 1 (classic)
//	6       2     reserved, 0
//	8       8     generation of the filter
//	16      8     seed of the shards
//	24      8     m, bits of each shard (at most 2^32)
//	32      4     k, hashes of each shard
//	36      4     s, shards (1 for a plain filter)
//	40      4     r, shard records that follow (at most s)
//	44      4     reserved, 0
//	48      ...   r shard records, in increasing shard index:
//	          0   4  shard index
//	          4   4  epoch of the shard's storage
//	          8   8  from: the shard's log position the copy holds
//	          16  8  to: the position after these changes (> from)
//	          24  8  count: the shard's count at to
//	          32  4  n, positions
//	          36  4  b, bytes of the body
//	          40  b  the body: coding 1, then the Rice parameter
//	                 (0-24), then the n positions set, increasing, as
//	                 Golomb-Rice gaps (rice.go); or coding 2, then the
//	                 shard's whole encoding (n = 0, from = 0, to >= 0):
//	                 the copy's shard becomes it, whatever it held
//	end-4   4     CRC-32 (IEEE) of every byte before it
//
// In version 1 a record's body is its n positions as LEB128 varints: the
// first itself, each next its distance from the one before.
//
// Every length is checked against the input before anything is allocated.

// DeltaMagic starts a delta.
const DeltaMagic = "EBDL"

const (
	deltaVersion      = abi.DeltaVersion
	deltaVersion1     = abi.DeltaVersionV1
	deltaCodingRice   = abi.DeltaCodingRice
	deltaCodingShard  = abi.DeltaCodingShard
	maxRiceBits       = abi.MaxRiceBits
	deltaHeaderSize   = abi.DeltaHeader
	deltaRecordHeader = abi.DeltaRecordHeader
	deltaTrailer      = abi.DeltaTrailer
	// MaxDeltaBits is the largest m a delta describes: positions are
	// varints of at most 5 bytes.
	MaxDeltaBits = 1 << 32
	kindClassic  = abi.KindClassic
)

// A Cursor names what a copy holds: the filter's generation and, for each
// shard, the epoch of its storage and its position in its log. The service
// sends it as the opaque token X-Edgebloom-Cursor; Text and ParseCursor
// convert.
type Cursor struct {
	Generation uint64
	Shards     []ShardPosition
}

// A ShardPosition is one shard's place in a Cursor.
type ShardPosition struct {
	Epoch    uint32
	Position uint64
}

// maxCursorBytes bounds a token: 64 shards take at most 16+64·15 bytes.
const maxCursorBytes = abi.MaxCursorBytes

// Text returns the cursor as the service's token: base64url without
// padding of a version byte (1), then the generation, s and each shard's
// epoch and position as unsigned LEB128 varints.
func (c Cursor) Text() string {
	b := []byte{abi.CursorVersion}
	b = binary.AppendUvarint(b, c.Generation)
	b = binary.AppendUvarint(b, uint64(len(c.Shards)))
	for _, sh := range c.Shards {
		b = binary.AppendUvarint(b, uint64(sh.Epoch))
		b = binary.AppendUvarint(b, sh.Position)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a token that Text made.
func ParseCursor(token string) (Cursor, error) {
	var c Cursor
	bad := func(why string) (Cursor, error) {
		return Cursor{}, fmt.Errorf("snapshot: not a cursor: %s", why)
	}
	if len(token) > maxCursorBytes {
		return bad("too long")
	}
	// Strict, as tokens are: one spelling of each cursor, no bits set
	// after the last byte.
	b, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(b) == 0 || b[0] != abi.CursorVersion {
		return bad("not base64url of a version 1 cursor")
	}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	g, ok1 := next()
	s, ok2 := next()
	// Each shard takes at least two bytes: s is checked before allocating.
	if !ok1 || !ok2 || s < 1 || s > uint64(len(b))/2 {
		return bad("bad header")
	}
	c.Generation = g
	c.Shards = make([]ShardPosition, s)
	for i := range c.Shards {
		e, ok1 := next()
		p, ok2 := next()
		if !ok1 || !ok2 || e > 1<<32-1 {
			return bad("bad shard position")
		}
		c.Shards[i] = ShardPosition{uint32(e), p}
	}
	if len(b) != 0 {
		return bad("bytes after the last shard")
	}
	return c, nil
}

// A DeltaRecord is what one shard changed between two positions: the
// positions it set, or, when Filter is not nil, the whole shard (From is 0
// then, and Positions empty).
type DeltaRecord struct {
	Shard     uint32
	Epoch     uint32
	From, To  uint64
	Count     uint64
	Positions []uint64 // increasing
	Filter    *bloom.Filter
}

// A Delta is a decoded delta. EncodeDelta writes Version 1 when it is 1,
// and the current version otherwise.
type Delta struct {
	Version    uint8
	Generation uint64
	Seed       uint64
	M          uint64
	K          uint32
	Shards     uint32
	Records    []DeltaRecord
}

// AppendDeltaHeader appends the 48-byte header of a delta of records
// records to dst.
func AppendDeltaHeader(dst []byte, generation, seed, m uint64, k, shards, records uint32) []byte {
	return appendDeltaHeader(dst, deltaVersion, generation, seed, m, k, shards, records)
}

func appendDeltaHeader(dst []byte, version uint8, generation, seed, m uint64, k, shards, records uint32) []byte {
	le := binary.LittleEndian
	dst = append(dst, DeltaMagic...)
	dst = append(dst, version, kindClassic, 0, 0)
	dst = le.AppendUint64(dst, generation)
	dst = le.AppendUint64(dst, seed)
	dst = le.AppendUint64(dst, m)
	dst = le.AppendUint32(dst, k)
	dst = le.AppendUint32(dst, shards)
	dst = le.AppendUint32(dst, records)
	return le.AppendUint32(dst, 0)
}

// AppendDeltaRecord appends one shard record to dst: the whole shard when
// r.Filter is not nil, else its positions. Positions may come in any order
// and more than once (the rows of a shard's log): they are sorted and
// deduplicated in place first.
func AppendDeltaRecord(dst []byte, r DeltaRecord) []byte {
	return appendDeltaRecord(dst, r, deltaVersion)
}

func appendDeltaRecord(dst []byte, r DeltaRecord, version uint8) []byte {
	slices.Sort(r.Positions)
	pos := slices.Compact(r.Positions)
	var body []byte
	switch {
	case r.Filter != nil:
		b, _ := r.Filter.MarshalBinary() // a classic filter's encoding never fails
		body = append([]byte{deltaCodingShard}, b...)
		pos = nil
	case version == deltaVersion1:
		prev := uint64(0)
		for i, p := range pos {
			if i == 0 {
				body = binary.AppendUvarint(body, p)
			} else {
				body = binary.AppendUvarint(body, p-prev)
			}
			prev = p
		}
	default:
		body = appendRice(nil, pos)
	}
	return appendRecordBody(dst, r, uint64(len(pos)), body)
}

// appendRecordBody appends the header of record r, of n positions, and
// its body.
func appendRecordBody(dst []byte, r DeltaRecord, n uint64, body []byte) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, r.Shard)
	dst = le.AppendUint32(dst, r.Epoch)
	dst = le.AppendUint64(dst, r.From)
	dst = le.AppendUint64(dst, r.To)
	dst = le.AppendUint64(dst, r.Count)
	dst = le.AppendUint32(dst, uint32(n))
	dst = le.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}

// AppendDeltaTrailer appends the CRC-32 of delta, which holds the header
// and every record, to it.
func AppendDeltaTrailer(delta []byte) []byte {
	return binary.LittleEndian.AppendUint32(delta, crc32.ChecksumIEEE(delta))
}

// EncodeDelta encodes d.
func EncodeDelta(d *Delta) []byte {
	version := uint8(deltaVersion)
	if d.Version == deltaVersion1 {
		version = deltaVersion1
	}
	out := appendDeltaHeader(nil, version, d.Generation, d.Seed, d.M, d.K, d.Shards, uint32(len(d.Records)))
	for _, r := range d.Records {
		out = appendDeltaRecord(out, r, version)
	}
	return AppendDeltaTrailer(out)
}

func deltaError(base error, format string, args ...any) error {
	return fmt.Errorf("snapshot: delta: %w: "+format, append([]any{base}, args...)...)
}

// DecodeDelta reads a delta. Its structure (lengths, the checksum, the
// order of records and positions, positions below m) is checked before
// anything but the positions of one record at a time is allocated; that
// it fits a copy is ApplyDelta's to check. Errors wrap bloom's sentinels:
// ErrNotFilter, ErrVersion, ErrCorrupt, ErrChecksum, or io.ErrUnexpectedEOF.
func DecodeDelta(data []byte) (*Delta, error) {
	return decodeDelta(data, nil)
}

// A positionSink takes each record of a delta being read, its positions
// not yet read, and returns where they go (set), or an error that ends the
// reading.
type positionSink func(d *Delta, rec *DeltaRecord) (set func(uint64), err error)

// decodeDelta is DecodeDelta; with sink, the positions of each Rice-coded
// record go to sink's set as they are read, not into Positions (records of
// version 1 and whole shards are refused then).
func decodeDelta(data []byte, sink positionSink) (*Delta, error) {
	le := binary.LittleEndian
	if len(data) < deltaHeaderSize+deltaTrailer {
		return nil, deltaError(io.ErrUnexpectedEOF, "%d bytes is shorter than a delta", len(data))
	}
	d := &Delta{
		Version:    data[abi.DeltaAtVersion],
		Generation: le.Uint64(data[abi.DeltaAtGeneration:]), Seed: le.Uint64(data[abi.DeltaAtSeed:]),
		M: le.Uint64(data[abi.DeltaAtBits:]), K: le.Uint32(data[abi.DeltaAtHashes:]),
		Shards: le.Uint32(data[abi.DeltaAtShards:]),
	}
	r := le.Uint32(data[abi.DeltaAtRecords:])
	switch {
	case string(data[:4]) != DeltaMagic:
		return nil, deltaError(bloom.ErrNotFilter, "bad magic")
	case d.Version != deltaVersion && d.Version != deltaVersion1:
		return nil, deltaError(bloom.ErrVersion, "delta version %d", d.Version)
	case data[abi.DeltaAtKind] != kindClassic:
		return nil, deltaError(bloom.ErrKind, "kind %d", data[abi.DeltaAtKind])
	case le.Uint16(data[abi.DeltaAtReserved:]) != 0 || le.Uint32(data[abi.DeltaAtReserved2:]) != 0:
		return nil, deltaError(bloom.ErrCorrupt, "reserved bytes set")
	case d.M < 1 || d.M > MaxDeltaBits || d.K < 1 || d.K > bloom.MaxHashes:
		return nil, deltaError(bloom.ErrCorrupt, "m = %d, k = %d", d.M, d.K)
	case d.Shards < 1 || d.Shards > MaxShards || r > d.Shards:
		return nil, deltaError(bloom.ErrCorrupt, "%d records of %d shards", r, d.Shards)
	}
	// The lengths first: every record's must fit what is left.
	end := uint64(len(data) - deltaTrailer)
	off := uint64(deltaHeaderSize)
	for range r {
		if end-off < deltaRecordHeader {
			return nil, deltaError(io.ErrUnexpectedEOF, "a record runs past the end")
		}
		b := uint64(le.Uint32(data[off+abi.DeltaRecordAtBytes:]))
		if end-off-deltaRecordHeader < b {
			return nil, deltaError(io.ErrUnexpectedEOF, "a record's positions run past the end")
		}
		off += deltaRecordHeader + b
	}
	if off != end {
		return nil, deltaError(bloom.ErrCorrupt, "%d bytes after the last record", end-off)
	}
	if got, want := crc32.ChecksumIEEE(data[:end]), le.Uint32(data[end:]); got != want {
		return nil, deltaError(bloom.ErrChecksum, "CRC-32 %08x, stored %08x", got, want)
	}
	d.Records = make([]DeltaRecord, r)
	off = deltaHeaderSize
	for i := range d.Records {
		rec := DeltaRecord{
			Shard: le.Uint32(data[off+abi.DeltaRecordAtShard:]), Epoch: le.Uint32(data[off+abi.DeltaRecordAtEpoch:]),
			From: le.Uint64(data[off+abi.DeltaRecordAtFrom:]), To: le.Uint64(data[off+abi.DeltaRecordAtTo:]),
			Count: le.Uint64(data[off+abi.DeltaRecordAtCount:]),
		}
		n := uint64(le.Uint32(data[off+abi.DeltaRecordAtPositions:]))
		b := uint64(le.Uint32(data[off+abi.DeltaRecordAtBytes:]))
		body := data[off+deltaRecordHeader : off+deltaRecordHeader+b]
		switch {
		case rec.Shard >= d.Shards || (i > 0 && rec.Shard <= d.Records[i-1].Shard):
			return nil, deltaError(bloom.ErrCorrupt, "record %d is of shard %d", i, rec.Shard)
		case rec.Count > bloom.MaxCountPerBit*d.M:
			return nil, deltaError(bloom.ErrCorrupt, "record %d has count %d", i, rec.Count)
		case sink != nil && (d.Version != deltaVersion || len(body) < 2 || body[0] != deltaCodingRice):
			return nil, deltaError(bloom.ErrCorrupt, "record %d: only Rice-coded positions are merged", i)
		case d.Version == deltaVersion && len(body) > 0 && body[0] == deltaCodingShard:
			if err := decodeShardRecord(d, &rec, i, n, body[1:]); err != nil {
				return nil, err
			}
		case rec.To <= rec.From:
			return nil, deltaError(bloom.ErrCorrupt, "record %d goes from %d to %d", i, rec.From, rec.To)
		case d.Version == deltaVersion1:
			if err := decodeVarints(d, &rec, i, n, body); err != nil {
				return nil, err
			}
		case len(body) < 2 || body[0] != deltaCodingRice || body[1] > maxRiceBits:
			return nil, deltaError(bloom.ErrCorrupt, "record %d: not a coding this version knows", i)
		case n > 8*(b-2) || n > d.M:
			// Every gap takes a bit at least.
			return nil, deltaError(bloom.ErrCorrupt, "record %d has %d positions in %d bytes", i, n, b)
		case sink != nil:
			set, err := sink(d, &rec)
			if err != nil {
				return nil, err
			}
			if !decodeRiceEach(body[2:], uint(body[1]), d.M, n, set) {
				return nil, deltaError(bloom.ErrCorrupt, "record %d: its positions are not %d Rice-coded gaps below m = %d", i, n, d.M)
			}
		default:
			rec.Positions = make([]uint64, n)
			if !decodeRice(body[2:], uint(body[1]), d.M, rec.Positions) {
				return nil, deltaError(bloom.ErrCorrupt, "record %d: its positions are not %d Rice-coded gaps below m = %d", i, n, d.M)
			}
		}
		d.Records[i] = rec
		off += deltaRecordHeader + b
	}
	return d, nil
}

// decodeVarints reads a version 1 record's n positions, LEB128 gaps.
func decodeVarints(d *Delta, rec *DeltaRecord, i int, n uint64, body []byte) error {
	if n > uint64(len(body)) || n > d.M {
		return deltaError(bloom.ErrCorrupt, "record %d has %d positions in %d bytes", i, n, len(body))
	}
	rec.Positions = make([]uint64, n)
	for j := range rec.Positions {
		v, w := binary.Uvarint(body)
		if w <= 0 || (j > 0 && v == 0) {
			return deltaError(bloom.ErrCorrupt, "record %d: position %d is not a valid varint", i, j)
		}
		body = body[w:]
		if j > 0 {
			v += rec.Positions[j-1]
		}
		if v >= d.M {
			return deltaError(bloom.ErrCorrupt, "record %d: position %d is %d, m is %d", i, j, v, d.M)
		}
		rec.Positions[j] = v
	}
	if len(body) != 0 {
		return deltaError(bloom.ErrCorrupt, "record %d: bytes after its positions", i)
	}
	return nil
}

// decodeShardRecord reads a record that carries its whole shard: a classic
// filter's encoding of the delta's m, k and seed, and of the record's
// count. Its length was checked against the input; bloom checks it in turn
// before allocating.
func decodeShardRecord(d *Delta, rec *DeltaRecord, i int, n uint64, enc []byte) error {
	if n != 0 || rec.From != 0 || rec.To < rec.From {
		return deltaError(bloom.ErrCorrupt, "record %d carries its shard whole, with %d positions from %d", i, n, rec.From)
	}
	f := new(bloom.Filter)
	if err := f.UnmarshalBinary(enc); err != nil {
		return deltaError(bloom.ErrCorrupt, "record %d: its shard does not load (%v)", i, err)
	}
	if f.NumBits() != d.M || f.NumHashes() != d.K || f.Seed() != d.Seed || f.Count() != rec.Count {
		return deltaError(bloom.ErrCorrupt, "record %d: its shard has m = %d, k = %d, seed %d, count %d", i, f.NumBits(), f.NumHashes(), f.Seed(), f.Count())
	}
	rec.Filter = f
	return nil
}

// ErrDeltaMismatch is wrapped by ApplyDelta's refusals of a well-formed
// delta that does not fit the copy: of another filter, of another
// generation, or not starting where the copy is (a gap).
var ErrDeltaMismatch = fmt.Errorf("snapshot: the delta does not fit the copy")

// ApplyDelta applies the delta in data to copy, a *bloom.Filter (one shard)
// or a *Sharded, which holds what cursor names, and returns the cursor of
// what it holds after. A delta of another filter (kind, m, k, seed or
// number of shards), of another generation or epoch, or that starts at
// another position than cursor's (a gap) is refused with an error wrapping
// ErrDeltaMismatch, and a malformed one as DecodeDelta refuses it; either
// way copy and cursor are unchanged. A record that carries its shard whole
// replaces the copy's shard, whatever its epoch and position.
func ApplyDelta(dst Set, cursor Cursor, data []byte) (Cursor, error) {
	var shards []*bloom.Filter
	switch c := dst.(type) {
	case *bloom.Filter:
		shards = []*bloom.Filter{c}
	case *Sharded:
		shards = c.Shards
	default:
		return cursor, fmt.Errorf("snapshot: ApplyDelta takes a *bloom.Filter or a *Sharded, not %T", dst)
	}
	d, err := DecodeDelta(data)
	if err != nil {
		return cursor, err
	}
	mismatch := func(format string, args ...any) (Cursor, error) {
		return cursor, fmt.Errorf("%w: "+format, append([]any{ErrDeltaMismatch}, args...)...)
	}
	if len(cursor.Shards) != len(shards) {
		return mismatch("the cursor names %d shards, the copy has %d", len(cursor.Shards), len(shards))
	}
	if int(d.Shards) != len(shards) {
		return mismatch("the delta is of a filter of %d shards, the copy has %d", d.Shards, len(shards))
	}
	for i, f := range shards {
		if f.NumBits() != d.M || f.NumHashes() != d.K || f.Seed() != d.Seed {
			return mismatch("the delta is of shards of m = %d, k = %d, seed %d; shard %d of the copy has m = %d, k = %d, seed %d",
				d.M, d.K, d.Seed, i, f.NumBits(), f.NumHashes(), f.Seed())
		}
	}
	if d.Generation != cursor.Generation {
		return mismatch("the delta is of generation %d, the copy of %d: load the snapshot again", d.Generation, cursor.Generation)
	}
	for _, r := range d.Records {
		at := cursor.Shards[r.Shard]
		switch {
		case r.Filter != nil: // the whole shard, whatever the copy's holds
		case r.Epoch != at.Epoch:
			return mismatch("shard %d: the delta is of epoch %d, the copy of %d: load the snapshot again", r.Shard, r.Epoch, at.Epoch)
		case r.From != at.Position:
			return mismatch("shard %d: the delta starts at position %d, the copy is at %d", r.Shard, r.From, at.Position)
		}
	}
	next := Cursor{Generation: cursor.Generation, Shards: slices.Clone(cursor.Shards)}
	for _, r := range d.Records {
		if r.Filter != nil {
			*shards[r.Shard] = *r.Filter
			next.Shards[r.Shard] = ShardPosition{Epoch: r.Epoch, Position: r.To}
			continue
		}
		// Checked above: every position is below m, so nothing fails here.
		if err := shards[r.Shard].ApplyChanges(r.Positions, r.Count); err != nil {
			panic(err)
		}
		next.Shards[r.Shard].Position = r.To
	}
	return next, nil
}
