package bloom

import (
	"math"

	"github.com/edgebloom/edgebloom/internal/engine"
)

// The npm module's engine (wasm/) reaches what it needs beyond this
// package's API through the hooks of package internal/engine, set here:
// batches in its scratch buffer's layout, keys hashed in pieces, and the
// sizes of a scalable filter's layers, computed by the rules that make them.
func init() {
	engine.Batch = batch
	engine.NewDigest = func(seed uint64) engine.Digest { return newSeededChecksum(seed) }
	engine.Digested = digest
	engine.NewSize = newSize
	engine.ScalableSize = scalableSize
	engine.ScalableGrowth = func(f any, n, limit uint64) uint64 { return f.(*ScalableFilter).growth(n, limit) }
	engine.Route = route
}

func batch(f any, keys []byte, stride int, lens []uint32, out []byte, add bool) int {
	type packer interface {
		packed(keys []byte, stride int, lens []uint32, out []byte, add bool)
	}
	var p packer
	switch f := f.(type) {
	case *Filter:
		p = f
	case *BlockedFilter:
		p = f
	case *routed:
		p = f
	default:
		return engine.OtherKind
	}
	if !packedOK(keys, stride, lens, out) {
		return engine.OutOfRange
	}
	p.packed(keys, stride, lens, out, add)
	return engine.Done
}

// digest adds (add) or tests the key whose digest is h in f, as
// engine.Digested says.
func digest(f any, h uint64, add bool) (result, ok bool) {
	if b, blocked := f.(*BlockedFilter); blocked {
		if add {
			return b.addDigest(h), true
		}
		return b.hasDigest(h), true
	}
	k, ok := f.(interface {
		add(h uint64) bool
		has(h uint64) bool
	})
	switch {
	case !ok:
		return false, false
	case add:
		return k.add(h), true
	}
	return k.has(h), true
}

func newSize(kind int, m uint64, generations int) uint64 {
	switch kind {
	case kindCounting:
		return recordSize(8 * payloadWords(kindCounting, m))
	case kindWindow:
		return recordSize(uint64(generations) * layerSize(m))
	case kindBlocked:
		return recordSize(32 * m)
	}
	return layerSize(m)
}

// scalableSize is the encoded size of NewScalable(capacity, fpRate), with
// its errors.
func scalableSize(capacity uint64, fpRate float64) (uint64, error) {
	if math.IsNaN(fpRate) || fpRate <= 0 || fpRate >= 1 {
		return 0, argError("fpRate", "must be in (0, 1)")
	}
	if capacity > MaxBits {
		return 0, argError("initialCapacity", "too large for one layer")
	}
	s := &ScalableFilter{capacity: capacity, fpRate: fpRate}
	m, _, err := Optimal(s.layerParams(0))
	if err != nil {
		return 0, err
	}
	return recordSize(layerSize(m)), nil
}

// layerSize is the encoded size of a layer of m bits (Filter.EncodedSize).
func layerSize(m uint64) uint64 { return recordSize(8 * wordsFor(m)) }

// growth returns the encoded bytes of the layers s adds if it takes n new
// keys (all new), or the first sum past limit: its last layer takes what
// its capacity has left, then each new layer takes its capacity in turn,
// as add and grow make them.
func (s *ScalableFilter) growth(n, limit uint64) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	last := s.fs[len(s.fs)-1]
	left := n - min(n, last.capacity-min(last.capacity, last.Count()))
	var bytes uint64
	for i := len(s.fs); left > 0 && i < MaxLayers && bytes <= limit; i++ {
		c, p := s.layerParams(i)
		m, _, err := Optimal(c, p)
		if c == 0 || err != nil {
			break
		}
		bytes += layerSize(m)
		left -= min(left, c)
	}
	return bytes
}
