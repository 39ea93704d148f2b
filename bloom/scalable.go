package bloom

import (
	"io"
	"math"
)

// Growth parameters of a ScalableFilter, as in Almeida et al., "Scalable
// Bloom Filters" (2007), and RedisBloom: each layer holds twice the keys of
// the one before at half its false-positive rate. The first layer gets half
// of scalableBudget times the target rate, so the rates of all layers sum to
// less than that.
//
// The budget leaves room for chance. With the whole target shared out, the
// expected rate after 6 full layers is 98.4% of the target, while the real
// rate of a first layer of 1000 keys has a standard deviation of 4% of its
// expected value: 2 of 4 key sets of 100 000 keys ended above the target. At
// 0.8 the expected rate stays below 80% of the target, for 4% more bits at 1%.
const (
	scalableGrowth    = 2
	scalableTightness = 0.5
	scalableBudget    = 0.8
)

// A ScalableFilter is a Bloom filter that grows when it fills. It starts as
// one classic filter for the initial capacity; when that holds its capacity,
// a new layer twice as large is added, with a tightened error rate, and new
// keys go there. A key is present if any layer has it. The false-positive
// rate stays at or below the target however many keys are added, at the cost
// of about log2(n/initialCapacity) layers to probe.
//
// A ScalableFilter is safe for concurrent use; it takes a read lock for Has
// and a lock for Add. The zero value is not usable; make one with
// NewScalable.
type ScalableFilter struct {
	layers
	capacity uint64 // of the first layer
	fpRate   float64
}

// NewScalable returns an empty scalable filter whose first layer holds
// initialCapacity keys, and whose false-positive rate stays below fpRate.
func NewScalable(initialCapacity uint64, fpRate float64) (*ScalableFilter, error) {
	if math.IsNaN(fpRate) || fpRate <= 0 || fpRate >= 1 {
		return nil, argError("fpRate", "must be in (0, 1)")
	}
	if _, _, err := Optimal(initialCapacity, fpRate*scalableBudget*(1-scalableTightness)); err != nil {
		return nil, err
	}
	s := &ScalableFilter{capacity: initialCapacity, fpRate: fpRate}
	if !s.grow() {
		return nil, argError("initialCapacity", "too large for one layer")
	}
	return s, nil
}

// layerParams returns the capacity and error rate of layer i.
func (s *ScalableFilter) layerParams(i int) (uint64, float64) {
	c := float64(s.capacity) * math.Pow(scalableGrowth, float64(i))
	if c > MaxBits {
		return 0, 0
	}
	return uint64(c), s.fpRate * scalableBudget * (1 - scalableTightness) * math.Pow(scalableTightness, float64(i))
}

// grow adds a layer. It reports false when the next layer would exceed
// MaxBits or MaxHashes, or be layer MaxLayers+1 (which MaxBits reaches
// first: the capacity doubles with each layer); the filter then keeps
// filling its last layer, and always encodes to a record its decoder reads.
func (s *ScalableFilter) grow() bool {
	if len(s.fs) >= MaxLayers {
		return false
	}
	n, p := s.layerParams(len(s.fs))
	m, k, err := Optimal(n, p)
	if n == 0 || err != nil {
		return false
	}
	f := newFilter(m, k, s.seed)
	f.capacity, f.fpRate = n, p
	s.fs = append(s.fs, f)
	return true
}

// Add adds key and reports whether it was new: whether no layer had it.
func (s *ScalableFilter) Add(key []byte) bool { return s.add(sum(key, s.seed)) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (s *ScalableFilter) AddString(key string) bool { return s.add(sumString(key, s.seed)) }

func (s *ScalableFilter) add(h uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hasLocked(h) {
		return false
	}
	last := s.fs[len(s.fs)-1]
	if last.Count() >= last.capacity && s.grow() {
		last = s.fs[len(s.fs)-1]
	}
	return last.add(h)
}

// Layers returns the number of layers.
func (s *ScalableFilter) Layers() int { return s.len() }

// Layer returns a copy of layer i, oldest first, for inspection.
func (s *ScalableFilter) Layer(i int) *Filter { return s.clone(i) }

// Capacity returns the number of keys the current layers hold at the target
// rate; it grows as layers are added.
func (s *ScalableFilter) Capacity() uint64 {
	return uint64(s.sum(func(l *Filter) float64 { return float64(l.capacity) }))
}

// InitialCapacity returns the capacity of the first layer.
func (s *ScalableFilter) InitialCapacity() uint64 { return s.capacity }

// TargetFPR returns the false-positive rate the filter stays below.
func (s *ScalableFilter) TargetFPR() float64 { return s.fpRate }

// OverCapacity reports whether the filter could not grow (a layer would
// exceed MaxBits) and its last layer holds more than its capacity.
func (s *ScalableFilter) OverCapacity() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fs[len(s.fs)-1].OverCapacity()
}

// Clear removes every key and drops all layers but the first.
func (s *ScalableFilter) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fs = s.fs[:1]
	s.fs[0].Clear()
}

func (s *ScalableFilter) header() header { return s.layers.header(kindScalable, s.capacity, s.fpRate) }

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (s *ScalableFilter) EncodedSize() uint64 { return s.encodedSize(s.header) }

// WriteTo writes the filter's encoding to w: a header followed by each
// layer's classic encoding.
func (s *ScalableFilter) WriteTo(w io.Writer) (int64, error) { return s.writeTo(w, s.header) }

// MarshalBinary returns the filter's encoding.
func (s *ScalableFilter) MarshalBinary() ([]byte, error) {
	return marshal(s.EncodedSize(), s.WriteTo)
}

// UnmarshalBinary replaces s with the scalable filter encoded in data,
// bounded by DefaultMaxBits bits in all. On error s is unchanged.
func (s *ScalableFilter) UnmarshalBinary(data []byte) error {
	g, err := decodeAll(data, DecodeScalable)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fs, s.seed, s.capacity, s.fpRate = g.fs, g.seed, g.capacity, g.fpRate
	return nil
}

// DecodeScalable reads one scalable filter of at most maxBits bits in all
// from r, with the guarantees of Decode.
func DecodeScalable(r io.Reader, maxBits uint64) (*ScalableFilter, error) {
	var h header
	fs, err := readParts(r, kindScalable, maxBits, &h, func(l *Filter) bool { return l.capacity != 0 })
	if err != nil {
		return nil, err
	}
	return &ScalableFilter{layers: layers{fs: fs, seed: h.seed}, capacity: h.capacity, fpRate: h.fpRate}, nil
}
