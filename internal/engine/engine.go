// Package engine is what package bloom gives the npm module's engine
// (wasm/) beyond its API: batches in the layout the engine's scratch buffer
// holds, keys hashed in pieces, and the sizes of a scalable filter's layers
// before they are made. These are not a promise to bloom's users, so bloom
// does not export them; it fills these hooks when it is initialized, and
// any program that imports bloom finds them set.
package engine

// A Digest hashes a key written in any number of pieces, as a filter hashes
// the whole key.
type Digest interface {
	Write(p []byte) (int, error)
	Sum64() uint64
}

// What Batch returns.
const (
	Done = iota
	OtherKind
	OutOfRange
)

var (
	// Batch adds (add) or tests the len(lens) keys laid out in keys, key i
	// being lens[i] bytes at keys[i·stride:] (back to back when stride is
	// 0), in f, a *bloom.Filter, a *bloom.BlockedFilter or a sharded filter of
	// Route, and sets out[i]
	// to 1 when key i was new (add) or is probably present, else 0. On wasm
	// it hashes and probes a group of keys in one loop. It returns Done, or,
	// having done nothing, OtherKind when f is of another kind and
	// OutOfRange when a key is longer than stride (stride not 0), a key lies
	// outside keys or out is shorter than lens: it checks every length, so
	// that its caller need not.
	Batch func(f any, keys []byte, stride int, lens []uint32, out []byte, add bool) int

	// Payload, when not nil, is the payload of the record the next decode
	// reads, already in place: a decoder of a kind whose payload is an
	// array of words (classic, counting, split-block) takes it as the
	// filter's words when it is as long as the checked header says,
	// hashing it where it is for the checksum, instead of reading the
	// payload, and sets Payload to nil. The engine loads a filter so, with
	// no copy of the input in linear memory: it allocates the words from
	// the checked header, JS copies the payload into them, then the decode
	// checks the record (abi.OpScratch, abi.OpDecode). No other program
	// sets it.
	Payload []uint64

	// NewDigest returns an empty Digest of keys for filters of the given
	// seed (their Seed method).
	NewDigest func(seed uint64) Digest

	// Digested adds (add) to f, a filter of package bloom, the key whose
	// Digest gave h and reports whether it was new, or reports whether f
	// probably holds it: the answer of Add or Has of the whole key. ok is
	// false when f is of no kind it knows.
	Digested func(f any, h uint64, add bool) (result, ok bool)

	// NewSize returns the encoded size in bytes of a new filter of kind (as
	// the format numbers kinds) of m bits, or counters for the counting
	// kind, or blocks for the split-block kind, and of generations
	// generations of those for a window. Not for the scalable kind: see
	// ScalableSize.
	NewSize func(kind int, m uint64, generations int) uint64

	// ScalableSize returns the encoded size in bytes of a new
	// bloom.NewScalable(initialCapacity, fpRate), without making it.
	ScalableSize func(initialCapacity uint64, fpRate float64) (uint64, error)

	// ScalableGrowth returns the encoded bytes that the new layers of
	// scalable filter f (a *bloom.ScalableFilter) add if it takes n new
	// keys, counting every key new, or the first sum past limit.
	ScalableGrowth func(f any, n, limit uint64) uint64
)

// Route makes a sharded filter (a sharded container's filters), which Batch
// takes as it takes one filter: Route(nil, router) starts one, then
// Route(r, shard) adds each shard in order. Key goes to shard
// floor(XXH64(key, router's seed) · s / 2^64), the router's first location
// of key, as package snapshot routes it: the router must have s bits.
// Route returns nil unless every filter is a *bloom.Filter and the shards
// have one seed.
var Route func(r, f any) any
