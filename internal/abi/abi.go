// Package abi holds every number and layout that both Go and JavaScript
// use, so that each is written once: the boundary between the npm module's
// JavaScript (js/) and its engine, edgebloom.wasm (wasm/) — the operation
// codes of the eb export, the statuses every export returns, the filter
// kinds and the order of the statistics — in this file; the binary formats
// both read and write in format.go; the edge service's limits in
// service.go; the classic filter's sizing rules in sizing.go. The Go side
// uses these; js/abi.js, js/sizing.js and worker/shard/abi.js are generated
// from them ("go generate ./internal/abi"), and a test fails when one is
// stale, so that the sides cannot drift apart.
package abi

//go:generate go run ./gen

// Version is the version of this boundary. The engine exports it (the abi
// export) and init() refuses an engine of another version with
// ERR_VERSION, so that a stale edgebloom.wasm fails at once instead of
// answering wrong. Bump it whenever an operation, a status, a kind, a
// statistic's index, an export's parameters or what any of them mean
// change.
const Version = 7

// MaxBits bounds every filter the engine makes or loads: 2^32 bits is a
// 512 MiB bitset, an eighth of the 4 GiB that wasm32 can address.
const MaxBits = 1 << 32

// Kinds of filter, as the binary format numbers them (docs/format.md): passed
// to OpNew, returned by OpInspect and in StatKind.
const (
	KindClassic  = 1
	KindCounting = 2
	KindScalable = 3
	KindWindow   = 4
	KindBlocked  = 5
)

// Statuses: every export returns a negative status on error, with the
// message kept for OpErrorPtr and OpErrorLen. The JS side throws an Error
// whose code is the status's name in upper snake case (ErrTooLarge is
// ERR_TOO_LARGE); ErrArg and ErrTooLarge are RangeErrors.
const (
	ErrArg          = -1 // an argument is out of range
	ErrFreed        = -2 // no live filter has this handle
	ErrIncompatible = -3
	ErrNotFilter    = -4
	ErrVersion      = -5
	ErrKind         = -6
	ErrCorrupt      = -7
	ErrChecksum     = -8
	ErrTooLarge     = -9
	ErrTruncated    = -10
	ErrInternal     = -11
	ErrUnsupported  = -12 // the operation does not apply to this kind
)

// Operation codes of the eb export, eb(op, h, a, b, c, d, x, y): h is a
// filter's handle, a to d are int32 and x, y float64. Addresses are offsets
// in linear memory, read as unsigned.
const (
	OpScratch       = 0  // make scratch at least a bytes (when b is 1: exactly a, at least 64 KiB); returns its address
	OpErrorPtr      = 1  // address of the last error message
	OpErrorLen      = 2  // length of the last error message
	OpNew           = 3  // kind a; capacity x and rate y, or bits x and hashes y (blocked: blocks x) when b is 1, blocked by ParquetBlocks(x, y) when b is 2; generations c (window); room d KiB; returns a handle
	OpFree          = 4  // free filter h
	OpRemove        = 7  // remove key scratch[a:a+b] from a counting filter
	OpPositions     = 10 // positions of key scratch[a:a+b] as float64 at c; returns k
	OpStats         = 11 // write the stats of h as float64 at a (see Stat*)
	OpUnion         = 12 // union filter a into h
	OpIntersect     = 13 // intersect h with filter a
	OpEqual         = 14 // 1 when h and a have equal parameters and contents
	OpClear         = 15 // clear h
	OpEncode        = 16 // encode h into the output buffer; returns its length
	OpOutputPtr     = 17 // address of the output buffer
	OpOutputRelease = 18 // drop the output buffer
	OpInspect       = 19 // check the header at scratch[0:64] as the decoder of kind b does, bounded by x bits and by a record of y bytes (internal/budget); returns the kind. With c > 0, for a classic, counting or split-block record: allocates c words for its payload for the OpDecode that follows to take in place (the record's header and checksum at scratch[0:72]), and returns their address
	OpDecode        = 20 // decode scratch[0:a] bounded by x bits and by a record of y bytes; returns a handle. Just after OpInspect with c 1: scratch[0:a] is the record's header and checksum, its payload those words, taken as the filter's
	OpLive          = 21 // number of live filters
	OpRotate        = 22 // rotate window h
	OpCrash         = 23 // exit the Go program as a panic outside recover would (tests use it)
	OpFromParquet   = 24 // a blocked filter from the Parquet bitset scratch[0:a] bounded by x; returns a handle
	OpParams        = 25 // write the constant-time stats of h as float64 at a, the others 0
	OpAddChanges    = 26 // add a keys (lengths at b, text scratch[c:d]) to classic h; positions set to the output buffer
	OpApplyChanges  = 27 // set the b positions (uint32) at scratch[a:] in classic h, and its count to x
	OpReadBytes     = 28 // copy bytes [x, y) of classic h's encoding to scratch[0:]
	OpWritePayload  = 29 // write scratch[0:a] to classic h's payload from byte x
	OpDigest        = 41 // hash a key of h in pieces: start (a 0), scratch[b:b+c] (a 1), end (a 2: add when b is 1, test when 0)
	OpOptimalBlocks = 42 // the blocks of a split-block filter for capacity x at rate y (bloom.OptimalBlocks), as float64 at scratch[0:8]
	OpBlockedFPR    = 43 // the expected rate of a split-block filter of x blocks after y keys (bloom.EstimateBlockedFPR), as float64 at scratch[0:8]
	OpGrowth        = 44 // the bytes the new layers of scalable h take if it gets x new keys, or the first sum past y, as float64 at scratch[0:8]
	OpRelease       = 45 // write the engine's release version (version.txt) at scratch[0:]; returns its length
	OpRouted        = 46 // a sharded filter of the b handles (int32) at scratch[a:], its router first then its shards, for the keys export (KeyRouted); returns its handle. With c 1: drop sharded filter h; with c 2: a new router of a shards (m = a, k = 1, seed RouteSeed), a classic filter's handle
)

// KeyRouted, added to the add argument of the keys export (not the key
// export, which takes filters only), says that h is a sharded filter of
// OpRouted: each key goes to its shard. Such a filter goes when it is
// dropped or when any of its filters is freed.
const KeyRouted = 2

// Statistics written by OpStats (all) and OpParams (those that take
// constant time, the others 0), as float64 in this order.
const (
	StatBits = iota
	StatHashes
	StatCount
	StatSetBits
	StatEstimatedCount
	StatFillRatio
	StatEstimatedFPR
	StatCapacity
	StatTargetFPR
	StatOverCapacity
	StatKind
	StatLayers
	StatEncodedSize
	NumStats
)
