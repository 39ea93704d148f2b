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

// The delta: a header, a record a shard that changed (a record header, then
// the positions it set as LEB128 gaps), and a CRC-32 of all before it.
const (
	DeltaMagic        = "EBDL"  // snapshot.DeltaMagic
	DeltaVersion      = 1       // the delta's version byte
	DeltaHeader       = 48      // the bytes before the first record
	DeltaRecordHeader = 40      // the bytes of a record before its positions
	DeltaTrailer      = 4       // the CRC-32 after the last record
	MaxDeltaBits      = 1 << 32 // snapshot.MaxDeltaBits: a position is a varint of at most MaxVarintBytes
	MaxVarintBytes    = 5       // the bytes of a position's varint, at most
	MaxCursorBytes    = 4096    // the longest cursor token a reader accepts
	CursorVersion     = 1       // the first byte of a cursor token
)
