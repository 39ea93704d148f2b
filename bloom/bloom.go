// Package bloom implements Bloom filters that give the same answers and the
// same bytes on every platform Go runs on, including GOOS=js GOARCH=wasm,
// where the edgebloom npm module runs this very code.
//
// A Bloom filter is a set that answers "probably in the set" or "certainly
// not in the set". False positives happen at a rate set when the filter is
// made; false negatives never do: a key that was added is always reported
// present (Bloom, "Space/time trade-offs in hash coding with allowable
// errors", CACM 1970).
//
// # Kinds
//
// Filter is the classic bitset, for one writer at a time; SyncFilter is the
// same filter for concurrent writers. CountingFilter keeps 4-bit counters and
// supports Remove. ScalableFilter grows by layers when it fills, keeping its
// false-positive rate bounded without knowing the final size. WindowFilter
// keeps the keys of the last few periods ("seen in the last 7 days") in
// generations that Rotate ages. FileFilter (Create, Open) is a classic
// filter kept in a memory-mapped file that survives restarts and crashes.
// BlockedFilter is Apache Parquet's split-block Bloom filter: the eight
// bits of a key lie in one 256-bit block, one cache miss a key, and its
// bitset is what a Parquet file stores (ParquetBitset, BlockedFromParquet).
//
// # Hashing
//
// Each key is hashed once with XXH64 (github.com/cespare/xxhash/v2); its k
// positions follow by enhanced double hashing in 64-bit arithmetic, so a
// filter may have more than 2^32 bits. Strings are hashed as their UTF-8
// bytes: AddString(s) and Add([]byte(s)) set the same bits. The scheme is
// frozen and described in docs/format.md. BlockedFilter maps keys to bits
// as Parquet does instead (HashParquet): XXH64 with seed 0, then a block and
// eight bits from the digest's halves.
//
// # Format
//
// MarshalBinary writes a versioned, checksummed, little-endian encoding that
// every runtime reads byte for byte. Decode reads one from an untrusted
// source and validates the header against the caller's size bound before it
// allocates.
//
// # Concurrency
//
// A Filter is for one writer: any number of goroutines may call Has and the
// statistics while nobody changes it, and changes (Add, Union, Clear, …)
// must not overlap any other call. It sets bits with plain loads and ORs,
// the fastest way on every platform. SyncFilter holds the same bits in the
// same format for concurrent writers: Add and Has run in parallel without
// locks, setting bits by atomic OR on 64-bit words. CountingFilter is safe
// for concurrent Add, Remove and Has too (its counters change by
// compare-and-swap). BlockedFilter, like Filter, has one writer at a time.
// ScalableFilter, WindowFilter and FileFilter take locks and run their Adds
// and Has calls in parallel where they can (see each type).
package bloom

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// A Filter is a classic Bloom filter of m bits and k hash functions, for
// one writer: any number of goroutines may call Has, HasString and the
// statistics at once while nobody writes, and one goroutine at a time may
// change it (Add, AddString, Union, Intersect, Clear, UnmarshalBinary,
// ReadFrom) while no other call runs. For concurrent writers use
// SyncFilter, which holds the same bits in the same format.
//
// The zero value is not usable; make one with New or NewWithSize.
type Filter struct {
	// count is first so that it is 64-bit aligned on 32-bit platforms,
	// where sync/atomic needs that: SyncFilter, WindowFilter and FileFilter
	// change it atomically.
	count    uint64
	words    []uint64 // the m bits, bit i in words[i/64] at 1<<(i%64)
	m        uint64
	k        uint32
	seed     uint64
	capacity uint64  // 0 when made from an explicit size
	fpRate   float64 // 0 when made from an explicit size
}

// New returns an empty filter sized by Optimal for capacity keys at
// false-positive rate fpRate. It returns an error naming the argument when
// either is out of range; nothing is allocated in that case.
func New(capacity uint64, fpRate float64) (*Filter, error) {
	m, k, err := Optimal(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	f := newFilter(m, k, 0)
	f.capacity, f.fpRate = capacity, fpRate
	return f, nil
}

// NewWithSize returns an empty filter with m bits and k hash functions. It
// returns an error naming the argument when m is 0 or above MaxBits, or k is
// 0 or above MaxHashes.
func NewWithSize(m uint64, k uint32) (*Filter, error) {
	return NewWithSeed(m, k, 0)
}

// NewWithSeed is NewWithSize with a hash seed other than the default 0.
// Filters with different seeds set different bits for the same key, which
// keeps the false positives of independent filters independent. Only filters
// with equal seeds can be combined.
func NewWithSeed(m uint64, k uint32, seed uint64) (*Filter, error) {
	if err := checkSize(m, k); err != nil {
		return nil, err
	}
	return newFilter(m, k, seed), nil
}

func newFilter(m uint64, k uint32, seed uint64) *Filter {
	words := make([]uint64, wordsFor(m))
	adviseHugePages(words)
	return &Filter{words: words, m: m, k: k, seed: seed}
}

func wordsFor(m uint64) uint64 { return (m + 63) / 64 }

// Add adds key to the filter and reports whether it was new, that is whether
// at least one of its bits was unset before. One call tests and adds, which
// is what a crawler needs: "if f.Add(url) { fetch(url) }". A false return
// for a key never added before is a false positive.
func (f *Filter) Add(key []byte) bool { return f.add(sum(key, f.seed)) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (f *Filter) AddString(key string) bool { return f.add(sumString(key, f.seed)) }

// Has reports whether key is probably in the filter. It never returns false
// for a key that was added; it may return true for a key that was not.
func (f *Filter) Has(key []byte) bool { return f.has(sum(key, f.seed)) }

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (f *Filter) HasString(key string) bool { return f.has(sumString(key, f.seed)) }

func (f *Filter) has(h uint64) bool {
	// Stop at the first unset bit. Testing bits in pairs, or all k without
	// a branch, mispredicts less but loads more words; over 1M and 10M keys
	// neither beat this (bench/README.md).
	words, m, k := f.words, f.m, uint64(f.k)
	x, y := start(h, m)
	for i := uint64(1); ; i++ {
		if words[x>>6]&(1<<(x&63)) == 0 {
			return false
		}
		if i == k {
			return true
		}
		x, y = step(x, y, i, m)
	}
}

func (f *Filter) add(h uint64) bool {
	// One pass: test each bit and set it when unset. Measured against
	// loading all k words first and then setting the missing bits (what
	// addAtomic does, to spend no locked instruction on a bit already set),
	// and against an unconditional OR of every word, this was the fastest:
	// load-all-then-set's array of positions and second loop cost more than
	// the branch mispredictions they saved, the more so the larger the
	// filter (bench/README.md, "Figures the code's design rests on"). A key
	// already present writes nothing.
	words, m, k := f.words, f.m, uint64(f.k)
	fresh := false
	x, y := start(h, m)
	for i := uint64(1); ; i++ {
		if w, b := words[x>>6], uint64(1)<<(x&63); w&b == 0 {
			words[x>>6] = w | b
			fresh = true
		}
		if i == k {
			break
		}
		x, y = step(x, y, i, m)
	}
	if fresh {
		f.count++
	}
	return fresh
}

// clone returns a copy of f that shares no memory with it. It reads f's
// words and count atomically, so it may run while a SyncFilter, a window
// generation or a FileFilter takes Adds.
func (f *Filter) clone() *Filter {
	c := &Filter{words: make([]uint64, len(f.words)), m: f.m, k: f.k, seed: f.seed, capacity: f.capacity, fpRate: f.fpRate}
	for i := range f.words {
		c.words[i] = load64(&f.words[i])
	}
	c.count = f.Count()
	return c
}

// Locations returns the k bit positions of key, in probe order. Positions
// may repeat when m is small.
func (f *Filter) Locations(key []byte) []uint64 {
	return appendLocations(make([]uint64, 0, f.k), sum(key, f.seed), f.m, f.k)
}

// NumBits returns m, the number of bits.
func (f *Filter) NumBits() uint64 { return f.m }

// NumHashes returns k, the number of hash functions.
func (f *Filter) NumHashes() uint32 { return f.k }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Count returns the number of Add calls that returned true. After Union or
// Intersect it is replaced by EstimatedCount, rounded.
func (f *Filter) Count() uint64 {
	// Atomic, as are the loads of SetBits, so that the kinds that add in
	// parallel (SyncFilter, WindowFilter, FileFilter) can share these
	// methods; on amd64 and arm64 such a load is a plain load.
	return atomic.LoadUint64(&f.count)
}

// Capacity returns the capacity the filter was made for by New, or 0 when it
// was made from an explicit size.
func (f *Filter) Capacity() uint64 { return f.capacity }

// TargetFPR returns the false-positive rate the filter was made for by New,
// or 0 when it was made from an explicit size.
func (f *Filter) TargetFPR() float64 { return f.fpRate }

// SetBits returns the number of bits set. It counts all m bits, so it takes
// time proportional to m.
//
// It is never inlined: its loop at each of its call sites made the wasm
// larger (docs/size.md, "What each choice saves").
//
//go:noinline
func (f *Filter) SetBits() uint64 {
	var n int
	for i := range f.words {
		n += bits.OnesCount64(load64(&f.words[i]))
	}
	return uint64(n)
}

// FillRatio returns the fraction of bits set, SetBits/NumBits.
func (f *Filter) FillRatio() float64 { return float64(f.SetBits()) / float64(f.m) }

// EstimatedCount estimates the number of distinct keys added from the number
// of bits set, -m/k · ln(1 - X/m) (Swamidass and Baldi, 2007). It is close to
// Count for a filter filled by Add, and meaningful after Union too. It is
// +Inf when every bit is set.
func (f *Filter) EstimatedCount() float64 { return estimateCount(f.m, f.k, f.SetBits()) }

// EstimatedFPR returns the false-positive rate at the current fill: the
// probability that a key never added finds all its k bits set, FillRatio^k.
func (f *Filter) EstimatedFPR() float64 { return math.Pow(f.FillRatio(), float64(f.k)) }

// OverCapacity reports whether the filter holds more keys than it was made
// for, so its false-positive rate is above target. For a filter made by New
// that is Count > Capacity; for one made from an explicit size, whose
// capacity is unknown, it is a fill ratio above one half, the fill at which
// k is optimal.
func (f *Filter) OverCapacity() bool {
	if f.capacity > 0 {
		return f.Count() > f.capacity
	}
	return 2*f.SetBits() > f.m
}

// Clear removes every key and resets Count.
func (f *Filter) Clear() {
	clear(f.words)
	f.count = 0
}

// Equal reports whether f and o have the same parameters and the same bits.
// Counts and targets are not compared.
func (f *Filter) Equal(o *Filter) bool {
	if f.compatible(o) != nil {
		return false
	}
	for i, w := range f.words {
		if w != o.words[i] {
			return false
		}
	}
	return true
}

// Union adds every key of o to f, so f reports present whatever either
// reported present. It returns an error wrapping ErrIncompatible, and leaves
// f unchanged, when m, k or the seed differ.
func (f *Filter) Union(o *Filter) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	for i, w := range o.words {
		f.words[i] |= w
	}
	f.recount()
	return nil
}

// Intersect keeps in f only the bits also set in o. Every key added to both
// stays present; the false-positive rate of the result is at most that of
// either. It returns an error wrapping ErrIncompatible, and leaves f
// unchanged, when m, k or the seed differ.
func (f *Filter) Intersect(o *Filter) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	for i, w := range o.words {
		f.words[i] &= w
	}
	f.recount()
	return nil
}

func (f *Filter) recount() {
	c := f.EstimatedCount()
	if math.IsInf(c, 1) {
		c = float64(f.m)
	}
	atomic.StoreUint64(&f.count, uint64(math.Round(c)))
}

func (f *Filter) compatible(o *Filter) error {
	switch {
	case f.m != o.m:
		return wrap(ErrIncompatible, "different number of bits")
	case f.k != o.k:
		return wrap(ErrIncompatible, "different number of hash functions")
	case f.seed != o.seed:
		return wrap(ErrIncompatible, "different seeds")
	}
	return nil
}
