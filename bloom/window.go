package bloom

import (
	"bytes"
	"io"
	"math"
	"sync"
)

// A WindowFilter remembers the keys of the last few periods: "seen in the
// last 7 days" is a window of 7 daily generations. Each generation is a
// classic filter of the same size. Add writes to the newest generation, Has
// asks all of them, and Rotate, called by the owner at the end of each
// period, drops the oldest generation and starts an empty newest one. A key
// added in the current period stays present for generations-1 more
// rotations; one last added longer ago is forgotten (up to the false
// positives of the generations that remain).
//
// Its false-positive rate is that of any generation answering wrongly, about
// generations times the rate of one generation.
//
// A WindowFilter is safe for concurrent use. Add and Has run in parallel;
// Rotate, Clear, encoding and decoding into it take a lock. The zero value
// is not usable; make one with NewWindow.
type WindowFilter struct {
	mu       sync.RWMutex
	gens     []*Filter // oldest first
	capacity uint64    // of each generation
	fpRate   float64   // of each generation
}

// NewWindow returns an empty window of generations generations, each a
// classic filter sized by Optimal for capacityPerGeneration keys at
// false-positive rate fpRate. It returns an error naming the argument when
// one is out of range, or when all generations together would exceed
// MaxBits.
func NewWindow(capacityPerGeneration uint64, fpRate float64, generations int) (*WindowFilter, error) {
	m, k, err := Optimal(capacityPerGeneration, fpRate)
	switch {
	case err != nil:
		return nil, err
	case generations < 1 || uint64(generations) > math.MaxUint32:
		return nil, argError("generations", "must be at least 1")
	case uint64(generations) > MaxBits/m:
		return nil, argError("generations", "too many: all generations together exceed MaxBits")
	}
	w := &WindowFilter{capacity: capacityPerGeneration, fpRate: fpRate}
	for range generations {
		w.gens = append(w.gens, w.newGeneration(m, k, 0))
	}
	return w, nil
}

func (w *WindowFilter) newGeneration(m uint64, k uint32, seed uint64) *Filter {
	f := newFilter(m, k, seed)
	f.capacity, f.fpRate = w.capacity, w.fpRate
	return f
}

// Add adds key to the newest generation and reports whether it was new to
// the window: whether no generation had it. A key already in an older
// generation is added again all the same, so it stays in the window for
// another full window; to count a crawl only once a window, test with Has
// and Add only what you crawl.
func (w *WindowFilter) Add(key []byte) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.add(sum(key, w.gens[0].seed))
}

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (w *WindowFilter) AddString(key string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.add(sumString(key, w.gens[0].seed))
}

// add runs under the read lock: generations do not change meanwhile, and
// their bits are set atomically.
func (w *WindowFilter) add(h uint64) bool {
	n := len(w.gens) - 1
	old := false
	for _, g := range w.gens[:n] {
		if g.has(h) {
			old = true
			break
		}
	}
	return w.gens[n].add(h) && !old
}

// Has reports whether key is probably in some generation.
func (w *WindowFilter) Has(key []byte) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.has(sum(key, w.gens[0].seed))
}

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (w *WindowFilter) HasString(key string) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.has(sumString(key, w.gens[0].seed))
}

func (w *WindowFilter) has(h uint64) bool {
	// Newest first: recent keys are the likeliest to come again.
	for i := len(w.gens) - 1; i >= 0; i-- {
		if w.gens[i].has(h) {
			return true
		}
	}
	return false
}

// Rotate drops the oldest generation and starts an empty newest one. The
// oldest generation's memory is reused, so Rotate allocates nothing.
func (w *WindowFilter) Rotate() {
	w.mu.Lock()
	defer w.mu.Unlock()
	g := w.gens[0]
	copy(w.gens, w.gens[1:])
	g.Clear()
	w.gens[len(w.gens)-1] = g
}

// Generations returns the number of generations.
func (w *WindowFilter) Generations() int {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.gens)
}

// Generation returns a copy of generation i, oldest first (the newest is
// Generations()-1), for inspection.
func (w *WindowFilter) Generation(i int) *Filter {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.gens[i].clone()
}

// sumGens adds up one statistic over the generations.
func (w *WindowFilter) sumGens(stat func(*Filter) float64) float64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var t float64
	for _, g := range w.gens {
		t += stat(g)
	}
	return t
}

// NumBits returns the total number of bits of all generations.
func (w *WindowFilter) NumBits() uint64 {
	return uint64(w.sumGens(func(g *Filter) float64 { return float64(g.m) }))
}

// NumHashes returns k, the number of hash functions of every generation.
func (w *WindowFilter) NumHashes() uint32 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.gens) == 0 {
		return 0
	}
	return w.gens[0].k
}

// Count returns the sum of the generations' counts: each counts the Add
// calls that set a bit in it. A key added again after a rotation counts
// once in each generation that holds it.
func (w *WindowFilter) Count() uint64 {
	return uint64(w.sumGens(func(g *Filter) float64 { return float64(g.Count()) }))
}

// SetBits returns the number of bits set in all generations.
func (w *WindowFilter) SetBits() uint64 {
	return uint64(w.sumGens(func(g *Filter) float64 { return float64(g.SetBits()) }))
}

// FillRatio returns the fraction of all bits that are set.
func (w *WindowFilter) FillRatio() float64 { return float64(w.SetBits()) / float64(w.NumBits()) }

// EstimatedCount estimates the number of keys, generation by generation and
// summed, so a key in two generations counts twice.
func (w *WindowFilter) EstimatedCount() float64 { return w.sumGens((*Filter).EstimatedCount) }

// EstimatedFPR returns the false-positive rate at the current fill: the
// probability that some generation reports a key it never saw.
func (w *WindowFilter) EstimatedFPR() float64 {
	return 1 - math.Exp(w.sumGens(func(g *Filter) float64 { return math.Log1p(-g.EstimatedFPR()) }))
}

// Capacity returns the capacity of each generation.
func (w *WindowFilter) Capacity() uint64 { return w.capacity }

// TargetFPR returns the false-positive rate of each generation at capacity.
// The window's rate is about Generations times that.
func (w *WindowFilter) TargetFPR() float64 { return w.fpRate }

// OverCapacity reports whether some generation holds more than its
// capacity.
func (w *WindowFilter) OverCapacity() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, g := range w.gens {
		if g.OverCapacity() {
			return true
		}
	}
	return false
}

// Clear removes every key from every generation.
func (w *WindowFilter) Clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, g := range w.gens {
		g.Clear()
	}
}

func (w *WindowFilter) header() header {
	g := w.gens[0]
	h := header{kind: kindWindow, seed: g.seed, k: g.k, parts: uint32(len(w.gens)), capacity: w.capacity, fpRate: w.fpRate}
	for _, g := range w.gens {
		h.m += g.m
		h.count += g.Count()
		h.payload += g.EncodedSize()
	}
	return h
}

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (w *WindowFilter) EncodedSize() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return recordSize(w.header().payload)
}

// WriteTo writes the window's encoding to w: a header followed by each
// generation's classic encoding, oldest first. It holds the lock, so Adds
// wait and the encoding is one moment's state.
func (w *WindowFilter) WriteTo(wr io.Writer) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return writeParts(wr, w.header(), w.gens)
}

// MarshalBinary returns the window's encoding.
func (w *WindowFilter) MarshalBinary() ([]byte, error) { return marshal(w.EncodedSize(), w.WriteTo) }

// UnmarshalBinary replaces w with the window encoded in data, bounded by
// DefaultMaxBits bits in all. On error w is unchanged.
func (w *WindowFilter) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	g, err := DecodeWindow(r, DefaultMaxBits)
	if err != nil {
		return err
	}
	if r.Len() != 0 {
		return wrap(ErrCorrupt, "trailing bytes after the filter")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gens, w.capacity, w.fpRate = g.gens, g.capacity, g.fpRate
	return nil
}

// DecodeWindow reads one window of at most maxBits bits in all from r, with
// the guarantees of Decode.
func DecodeWindow(r io.Reader, maxBits uint64) (*WindowFilter, error) {
	var h header
	gens, err := readParts(r, kindWindow, maxBits, &h, func(g *Filter) bool {
		return g.m == h.m/uint64(h.parts) && g.k == h.k && g.capacity == h.capacity && g.fpRate == h.fpRate
	})
	if err != nil {
		return nil, err
	}
	return &WindowFilter{gens: gens, capacity: h.capacity, fpRate: h.fpRate}, nil
}
