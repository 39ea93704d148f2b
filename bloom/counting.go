package bloom

import (
	"io"
	"math"
	"sync/atomic"
)

// CounterMax is the value at which a CountingFilter's 4-bit counters stop:
// a counter that reached it is never decremented again, because the keys
// that went through it can no longer be counted.
const CounterMax = 15

// A CountingFilter is a Bloom filter of m 4-bit counters instead of bits, so
// that keys can be removed (Fan et al., "Summary Cache", 2000). It takes four
// times the memory of a Filter with the same m and k, and answers the same.
//
// Counters saturate at CounterMax and are never decremented after that, so
// removing a key never makes another added key disappear. Remove only keys
// that were added: removing a key that was never added (one reported present
// as a false positive) can clear counters that other keys rely on, as in
// every counting Bloom filter.
//
// The zero value is not usable; make one with NewCounting or
// NewCountingWithSize.
type CountingFilter struct {
	words    []uint64 // 16 counters a word, counter i at bits 4(i%16) of words[i/16]
	m        uint64
	k        uint32
	seed     uint64
	count    atomic.Int64
	capacity uint64
	fpRate   float64
}

// NewCounting returns an empty counting filter sized by Optimal for capacity
// keys at false-positive rate fpRate.
func NewCounting(capacity uint64, fpRate float64) (*CountingFilter, error) {
	m, k, err := Optimal(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	f := newCounting(m, k, 0)
	f.capacity, f.fpRate = capacity, fpRate
	return f, nil
}

// NewCountingWithSize returns an empty counting filter with m counters and k
// hash functions, with the same limits as NewWithSize.
func NewCountingWithSize(m uint64, k uint32) (*CountingFilter, error) {
	if err := checkSize(m, k); err != nil {
		return nil, err
	}
	return newCounting(m, k, 0), nil
}

func newCounting(m uint64, k uint32, seed uint64) *CountingFilter {
	return &CountingFilter{words: make([]uint64, payloadWords(kindCounting, m)), m: m, k: k, seed: seed}
}

func (f *CountingFilter) counter(pos uint64) uint64 {
	return atomic.LoadUint64(&f.words[pos>>4]) >> ((pos & 15) * 4) & 0xf
}

// update changes the counter at pos by delta (+1 or -1), unless it is
// saturated or the change would leave the range [0, CounterMax]. It returns
// the counter's value before.
func (f *CountingFilter) update(pos uint64, delta int) uint64 {
	w, shift := &f.words[pos>>4], (pos&15)*4
	for {
		old := atomic.LoadUint64(w)
		c := old >> shift & 0xf
		if c == CounterMax || (delta < 0 && c == 0) {
			return c
		}
		next := old + 1<<shift
		if delta < 0 {
			next = old - 1<<shift
		}
		if atomic.CompareAndSwapUint64(w, old, next) {
			return c
		}
	}
}

// Add adds key and reports whether it was new: whether one of its counters
// was zero before.
func (f *CountingFilter) Add(key []byte) bool { return f.add(sum(key, f.seed)) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (f *CountingFilter) AddString(key string) bool { return f.add(sumString(key, f.seed)) }

func (f *CountingFilter) add(h uint64) bool {
	changed := false
	p := newProbe(h, f.m)
	for i := uint32(0); i < f.k; i++ {
		if f.update(p.next(), +1) == 0 {
			changed = true
		}
	}
	if changed {
		f.count.Add(1)
	}
	return changed
}

// Has reports whether key is probably in the filter: whether all its
// counters are above zero.
func (f *CountingFilter) Has(key []byte) bool { return f.has(sum(key, f.seed)) }

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (f *CountingFilter) HasString(key string) bool { return f.has(sumString(key, f.seed)) }

func (f *CountingFilter) has(h uint64) bool {
	p := newProbe(h, f.m)
	for i := uint32(0); i < f.k; i++ {
		if f.counter(p.next()) == 0 {
			return false
		}
	}
	return true
}

// Remove removes key and reports whether it did. When key is certainly absent
// (a counter is zero) Remove returns false and changes nothing. Saturated
// counters are left as they are.
func (f *CountingFilter) Remove(key []byte) bool { return f.remove(sum(key, f.seed)) }

// RemoveString is Remove for a string, hashed as its UTF-8 bytes.
func (f *CountingFilter) RemoveString(key string) bool { return f.remove(sumString(key, f.seed)) }

func (f *CountingFilter) remove(h uint64) bool {
	if !f.has(h) {
		return false
	}
	p := newProbe(h, f.m)
	for i := uint32(0); i < f.k; i++ {
		f.update(p.next(), -1)
	}
	if f.count.Add(-1) < 0 {
		f.count.Store(0)
	}
	return true
}

// Locations returns the k counter positions of key, in probe order.
func (f *CountingFilter) Locations(key []byte) []uint64 {
	return appendLocations(make([]uint64, 0, f.k), sum(key, f.seed), f.m, f.k)
}

// Counter returns the value of counter i, for inspection.
func (f *CountingFilter) Counter(i uint64) uint8 { return uint8(f.counter(i)) }

// NumBits returns m, the number of counters.
func (f *CountingFilter) NumBits() uint64 { return f.m }

// NumHashes returns k, the number of hash functions.
func (f *CountingFilter) NumHashes() uint32 { return f.k }

// Count returns the number of Add calls that returned true less the number
// of Remove calls that returned true.
func (f *CountingFilter) Count() uint64 { return uint64(f.count.Load()) }

// Capacity returns the capacity given to NewCounting, or 0.
func (f *CountingFilter) Capacity() uint64 { return f.capacity }

// TargetFPR returns the rate given to NewCounting, or 0.
func (f *CountingFilter) TargetFPR() float64 { return f.fpRate }

// SetBits returns the number of non-zero counters.
func (f *CountingFilter) SetBits() uint64 {
	var n uint64
	for i := range f.words {
		w := atomic.LoadUint64(&f.words[i])
		for ; w != 0; w >>= 4 {
			if w&0xf != 0 {
				n++
			}
		}
	}
	return n
}

// FillRatio returns the fraction of non-zero counters.
func (f *CountingFilter) FillRatio() float64 { return float64(f.SetBits()) / float64(f.m) }

// EstimatedCount estimates the number of keys from the non-zero counters, as
// Filter.EstimatedCount does from set bits.
func (f *CountingFilter) EstimatedCount() float64 { return estimateCount(f.m, f.k, f.SetBits()) }

// EstimatedFPR returns the false-positive rate at the current fill.
func (f *CountingFilter) EstimatedFPR() float64 { return math.Pow(f.FillRatio(), float64(f.k)) }

// OverCapacity reports whether the filter holds more keys than it was made
// for; see Filter.OverCapacity.
func (f *CountingFilter) OverCapacity() bool {
	if f.capacity > 0 {
		return f.Count() > f.capacity
	}
	return 2*f.SetBits() > f.m
}

// Clear removes every key.
func (f *CountingFilter) Clear() {
	clear(f.words)
	f.count.Store(0)
}

// Equal reports whether f and o have the same parameters and counters.
func (f *CountingFilter) Equal(o *CountingFilter) bool {
	if f.m != o.m || f.k != o.k || f.seed != o.seed {
		return false
	}
	for i := range f.words {
		if atomic.LoadUint64(&f.words[i]) != atomic.LoadUint64(&o.words[i]) {
			return false
		}
	}
	return true
}

func (f *CountingFilter) header() header {
	return header{
		kind: kindCounting, seed: f.seed, m: f.m, k: f.k, count: f.Count(),
		capacity: f.capacity, fpRate: f.fpRate, payload: 8 * uint64(len(f.words)),
	}
}

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (f *CountingFilter) EncodedSize() uint64 { return recordSize(8 * uint64(len(f.words))) }

// WriteTo writes the filter's encoding to w.
func (f *CountingFilter) WriteTo(w io.Writer) (int64, error) {
	return writeRecord(w, f.header(), func(rw *recordWriter) { rw.writeWords(f.words) })
}

// MarshalBinary returns the filter's encoding.
func (f *CountingFilter) MarshalBinary() ([]byte, error) {
	return marshal(f.EncodedSize(), f.WriteTo)
}

// UnmarshalBinary replaces f with the counting filter encoded in data,
// bounded by DefaultMaxBits counters. On error f is unchanged.
func (f *CountingFilter) UnmarshalBinary(data []byte) error {
	g, err := decodeAll(data, DecodeCounting)
	if err != nil {
		return err
	}
	f.words, f.m, f.k, f.seed, f.capacity, f.fpRate = g.words, g.m, g.k, g.seed, g.capacity, g.fpRate
	f.count.Store(g.count.Load())
	return nil
}

// DecodeCounting reads one counting filter of at most maxBits counters from
// r, with the guarantees of Decode.
func DecodeCounting(r io.Reader, maxBits uint64) (*CountingFilter, error) {
	h, words, err := readRecord(r, kindCounting, maxBits)
	if err != nil {
		return nil, err
	}
	f := &CountingFilter{words: words, m: h.m, k: h.k, seed: h.seed, capacity: h.capacity, fpRate: h.fpRate}
	f.count.Store(int64(min(h.count, math.MaxInt64)))
	return f, nil
}
