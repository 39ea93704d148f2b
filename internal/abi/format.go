package abi

// The binary formats both sides read and write (docs/format.md): a
// filter's record, the sharded container and the delta. Package bloom and
// package snapshot take their layouts from here; the limits they export
// (bloom.MaxLayers, snapshot.MaxShards, ...) are checked against these by
// this package's test.

// A filter's record: the header, the payload, then the XXH64 checksum of
// both. Limits of what a record holds, as package bloom exports them.
const (
	HeaderSize     = 64   // the header before a record's payload
	ChecksumSize   = 8    // the checksum after it
	MaxHashes      = 64   // bloom.MaxHashes
	MaxLayers      = 64   // bloom.MaxLayers: layers of a scalable filter
	MaxGenerations = 4096 // bloom.MaxGenerations: generations of a window filter
	MaxCountPerBit = 64   // bloom.MaxCountPerBit: a record's count is at most this times its bits
	BlockBits      = 256  // bloom.BlockBits: the bits of a split-block filter's block
)

// Where the fields of a record's header start (docs/format.md); integers
// are little-endian.
const (
	RecordAtVersion = 4  // the format version (1 byte), after the magic
	RecordAtKind    = 5  // the kind (1 byte)
	RecordAtSeed    = 8  // the XXH64 seed of the keys (uint64)
	RecordAtBits    = 16 // m (uint64)
	RecordAtHashes  = 24 // k (uint32)
	RecordAtCount   = 32 // count (uint64)
)

// BatchGroup is the number of keys a batch hashes before it probes any of
// them (bloom's batches), and the number of string keys the npm module
// encodes for one call of the keys export.
const BatchGroup = 32

// The sharded container: magic, version, routing scheme, 2 reserved bytes,
// s (uint32), 4 reserved bytes, the router record's length (uint64), each
// shard record's length (uint64), then the router and the shards.
const (
	ContainerMagic   = "EBSC"             // snapshot.Magic
	ContainerVersion = 1                  // the container's version byte
	ContainerRouting = 1                  // its routing scheme byte
	ContainerHeader  = 24                 // the bytes before the records' lengths
	MaxShards        = 1 << 16            // snapshot.MaxShards: shards a reader accepts
	RouteSeed        = 0x9e3779b97f4a7c15 // snapshot.RouteSeed: the XXH64 seed of the routing hash
)

// Where the fields of the container's header start; integers are
// little-endian. The router record's length is at ContainerAtLengths, shard
// i's at ContainerAtLengths + 8·(i+1).
const (
	ContainerAtVersion   = 4  // the container's version (1 byte), after the magic
	ContainerAtRouting   = 5  // its routing scheme (1 byte)
	ContainerAtReserved  = 6  // 2 reserved bytes, 0
	ContainerAtShards    = 8  // s (uint32)
	ContainerAtReserved2 = 12 // 4 reserved bytes, 0
	ContainerAtLengths   = 16 // the records' lengths (uint64 each)
)

// The delta: a header, a record a shard that changed (a record header, then
// its body: in version 2 a coding byte and the positions it set as
// Golomb-Rice gaps, or the shard's whole encoding; in version 1 the
// positions as LEB128 gaps), and a CRC-32 of all before it.
const (
	DeltaMagic        = "EBDL"  // snapshot.DeltaMagic
	DeltaVersion      = 2       // the delta's version byte that writers write
	DeltaVersionV1    = 1       // the version before, of LEB128 gaps, that readers still read
	DeltaHeader       = 48      // the bytes before the first record
	DeltaRecordHeader = 40      // the bytes of a record before its positions
	DeltaTrailer      = 4       // the CRC-32 after the last record
	MaxDeltaBits      = 1 << 32 // snapshot.MaxDeltaBits: a position is a varint of at most MaxVarintBytes
	MaxVarintBytes    = 5       // the bytes of a position's varint (version 1), at most
	DeltaCodingRice   = 1       // a version 2 record's body: this byte, the Rice parameter, the gaps
	DeltaCodingShard  = 2       // a version 2 record's body: this byte, the shard's whole encoding
	MaxRiceBits       = 24      // the largest Rice parameter: a gap's remainder takes at most this many bits
	MaxCursorBytes    = 4096    // the longest cursor token a reader accepts
	CursorVersion     = 1       // the first byte of a cursor token
)

// Where the fields of the delta's header start; integers are little-endian.
const (
	DeltaAtVersion    = 4  // the delta's version (1 byte), after the magic
	DeltaAtKind       = 5  // the kind of every shard (1 byte)
	DeltaAtReserved   = 6  // 2 reserved bytes, 0
	DeltaAtGeneration = 8  // the filter's generation (uint64)
	DeltaAtSeed       = 16 // the shards' XXH64 seed (uint64)
	DeltaAtBits       = 24 // m of each shard (uint64)
	DeltaAtHashes     = 32 // k of each shard (uint32)
	DeltaAtShards     = 36 // s, the filter's shards (uint32)
	DeltaAtRecords    = 40 // r, the records that follow (uint32)
	DeltaAtReserved2  = 44 // 4 reserved bytes, 0
)

// Where the fields of a delta's record start, from the record's first byte.
const (
	DeltaRecordAtShard     = 0  // the shard's index (uint32)
	DeltaRecordAtEpoch     = 4  // the epoch of the shard's storage (uint32)
	DeltaRecordAtFrom      = 8  // the position the copy must be at (uint64)
	DeltaRecordAtTo        = 16 // the position after this record (uint64)
	DeltaRecordAtCount     = 24 // the shard's count at position to (uint64)
	DeltaRecordAtPositions = 32 // n, the positions (uint32)
	DeltaRecordAtBytes     = 36 // b, the bytes of positions (uint32)
)
