package bloom

import (
	"io"
	"sync"
)

// layers are classic filters of one seed behind a lock, oldest first: the
// layers of a ScalableFilter and the generations of a WindowFilter. Both
// kinds embed it, so its exported methods are theirs. They are shared, and
// kept from being inlined into each kind's wrappers, because every function
// costs the npm module's wasm a lot: a copy for each kind made it larger
// (docs/size.md, "What each choice saves").
type layers struct {
	mu   sync.RWMutex
	fs   []*Filter
	seed uint64
}

// Has reports whether key is probably in the filter: whether some layer or
// generation has it. It never returns false for a key that is there.
//
//go:noinline
func (l *layers) Has(key []byte) bool { return l.has(sum(key, l.seed)) }

// HasString is Has for a string, hashed as its UTF-8 bytes.
//
//go:noinline
func (l *layers) HasString(key string) bool { return l.has(sumString(key, l.seed)) }

func (l *layers) has(h uint64) bool {
	// No defer where nothing can panic: each costs the wasm about 300 bytes.
	l.mu.RLock()
	ok := l.hasLocked(h)
	l.mu.RUnlock()
	return ok
}

func (l *layers) hasLocked(h uint64) bool {
	// Newest first: it holds the most keys, or the most recent. Atomic
	// loads: a window's newest generation takes Adds meanwhile.
	for i := len(l.fs) - 1; i >= 0; i-- {
		if l.fs[i].hasAtomic(h) {
			return true
		}
	}
	return false
}

// sum adds up one statistic over the layers.
func (l *layers) sum(stat func(*Filter) float64) float64 {
	l.mu.RLock()
	var t float64
	for _, f := range l.fs {
		t += stat(f)
	}
	l.mu.RUnlock()
	return t
}

// NumBits returns the total number of bits of all layers or generations.
//
//go:noinline
func (l *layers) NumBits() uint64 {
	return uint64(l.sum(func(f *Filter) float64 { return float64(f.m) }))
}

// Count returns the sum of the counts of the layers or generations: each
// counts the Add calls that set a bit in it.
//
//go:noinline
func (l *layers) Count() uint64 {
	return uint64(l.sum(func(f *Filter) float64 { return float64(f.Count()) }))
}

// SetBits returns the number of bits set in all layers or generations.
//
//go:noinline
func (l *layers) SetBits() uint64 {
	return uint64(l.sum(func(f *Filter) float64 { return float64(f.SetBits()) }))
}

// FillRatio returns the fraction of all bits that are set.
//
//go:noinline
func (l *layers) FillRatio() float64 { return float64(l.SetBits()) / float64(l.NumBits()) }

// EstimatedCount estimates the number of distinct keys, layer by layer (or
// generation by generation) and summed.
//
//go:noinline
func (l *layers) EstimatedCount() float64 { return l.sum((*Filter).EstimatedCount) }

// EstimatedFPR returns the false-positive rate at the current fill: the
// probability that some layer or generation reports a key it never saw.
//
//go:noinline
func (l *layers) EstimatedFPR() float64 {
	l.mu.RLock()
	miss := 1.0
	for _, f := range l.fs {
		miss *= 1 - f.EstimatedFPR()
	}
	l.mu.RUnlock()
	return 1 - miss
}

// header returns the header of kind with the sums of the layers; the
// caller holds the lock.
func (l *layers) header(kind uint8, capacity uint64, fpRate float64) header {
	h := header{kind: kind, seed: l.seed, parts: uint32(len(l.fs)), capacity: capacity, fpRate: fpRate}
	for _, f := range l.fs {
		h.m += f.m
		h.count += f.Count()
		h.payload += f.EncodedSize()
	}
	return h
}

// encodedSize is EncodedSize for the header head returns.
func (l *layers) encodedSize(head func() header) uint64 {
	l.mu.RLock()
	n := recordSize(head().payload)
	l.mu.RUnlock()
	return n
}

// writeTo writes a header followed by each layer's classic encoding. It
// holds the lock, so Adds wait and the encoding is one moment's state.
func (l *layers) writeTo(w io.Writer, head func() header) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return writeRecord(w, head(), func(rw *recordWriter) {
		for _, f := range l.fs {
			if _, err := f.WriteTo(rw); err != nil {
				return
			}
		}
	})
}

// clone returns a copy of layer i.
func (l *layers) clone(i int) *Filter {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.fs[i].clone()
}

// len returns the number of layers.
func (l *layers) len() int {
	l.mu.RLock()
	n := len(l.fs)
	l.mu.RUnlock()
	return n
}
