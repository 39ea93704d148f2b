package bloom

import "io"

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
	layers           // the generations
	capacity uint64  // of each generation
	fpRate   float64 // of each generation
}

// NewWindow returns an empty window of generations generations, each a
// classic filter sized by Optimal for capacityPerGeneration keys at
// false-positive rate fpRate. It returns an error naming the argument when
// one is out of range (generations must be from 1 to MaxGenerations), or
// when all generations together would exceed MaxBits.
func NewWindow(capacityPerGeneration uint64, fpRate float64, generations int) (*WindowFilter, error) {
	m, k, err := Optimal(capacityPerGeneration, fpRate)
	switch {
	case err != nil:
		return nil, err
	case generations < 1:
		return nil, argError("generations", "must be at least 1")
	case generations > MaxGenerations:
		return nil, argError("generations", "must be at most MaxGenerations (4096), got "+utoa(uint64(generations)))
	case uint64(generations) > MaxBits/m:
		return nil, argError("generations", "too many: all generations together exceed MaxBits")
	}
	w := &WindowFilter{capacity: capacityPerGeneration, fpRate: fpRate}
	for range generations {
		g := newFilter(m, k, 0)
		g.capacity, g.fpRate = capacityPerGeneration, fpRate
		w.fs = append(w.fs, g)
	}
	return w, nil
}

// Add adds key to the newest generation and reports whether it was new to
// the window: whether no generation had it. A key already in an older
// generation is added again all the same, so it stays in the window for
// another full window; to count a crawl only once a window, test with Has
// and Add only what you crawl.
func (w *WindowFilter) Add(key []byte) bool { return w.add(sum(key, w.seed)) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (w *WindowFilter) AddString(key string) bool { return w.add(sumString(key, w.seed)) }

// add holds the read lock only: generations do not change meanwhile, and
// the newest one's bits are set atomically (as SyncFilter's), so Adds run in
// parallel.
func (w *WindowFilter) add(h uint64) bool {
	// No defer, here and below: each costs the npm module's wasm about
	// 300 bytes, and none of these calls can panic.
	w.mu.RLock()
	n := len(w.fs) - 1
	old := false
	for _, g := range w.fs[:n] {
		old = old || g.has(h)
	}
	added := w.fs[n].addAtomic(h) && !old
	w.mu.RUnlock()
	return added
}

// Rotate drops the oldest generation and starts an empty newest one. The
// oldest generation's memory is reused, so Rotate allocates nothing.
func (w *WindowFilter) Rotate() {
	w.mu.Lock()
	g := w.fs[0]
	copy(w.fs, w.fs[1:])
	g.Clear()
	w.fs[len(w.fs)-1] = g
	w.mu.Unlock()
}

// Generations returns the number of generations.
func (w *WindowFilter) Generations() int { return w.len() }

// Generation returns a copy of generation i, oldest first (the newest is
// Generations()-1), for inspection.
func (w *WindowFilter) Generation(i int) *Filter { return w.clone(i) }

// NumHashes returns k, the number of hash functions of every generation.
func (w *WindowFilter) NumHashes() uint32 {
	// Generations never change size: only UnmarshalBinary replaces them.
	if len(w.fs) == 0 {
		return 0
	}
	return w.fs[0].k
}

// Capacity returns the capacity of each generation.
func (w *WindowFilter) Capacity() uint64 { return w.capacity }

// TargetFPR returns the false-positive rate of each generation at capacity.
// The window's rate is about Generations times that.
func (w *WindowFilter) TargetFPR() float64 { return w.fpRate }

// OverCapacity reports whether some generation holds more than its
// capacity.
func (w *WindowFilter) OverCapacity() bool {
	return w.sum(func(g *Filter) float64 { return float64(g.Count() / (g.capacity + 1)) }) > 0
}

// Clear removes every key from every generation.
func (w *WindowFilter) Clear() {
	w.mu.Lock()
	for _, g := range w.fs {
		g.Clear()
	}
	w.mu.Unlock()
}

func (w *WindowFilter) header() header {
	h := w.layers.header(kindWindow, w.capacity, w.fpRate)
	if len(w.fs) > 0 {
		h.k = w.fs[0].k
	}
	return h
}

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (w *WindowFilter) EncodedSize() uint64 { return w.encodedSize(w.header) }

// WriteTo writes the window's encoding to wr: a header followed by each
// generation's classic encoding, oldest first. It holds the lock, so Adds
// wait and the encoding is one moment's state.
func (w *WindowFilter) WriteTo(wr io.Writer) (int64, error) { return w.writeTo(wr, w.header) }

// MarshalBinary returns the window's encoding.
func (w *WindowFilter) MarshalBinary() ([]byte, error) { return marshal(w.EncodedSize(), w.WriteTo) }

// UnmarshalBinary replaces w with the window encoded in data, bounded by
// DefaultMaxBits bits in all. On error w is unchanged.
func (w *WindowFilter) UnmarshalBinary(data []byte) error {
	g, err := decodeAll(data, DecodeWindow)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fs, w.seed, w.capacity, w.fpRate = g.fs, g.seed, g.capacity, g.fpRate
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
	return &WindowFilter{layers: layers{fs: gens, seed: h.seed}, capacity: h.capacity, fpRate: h.fpRate}, nil
}
