package bloom

import (
	"math"
	"math/bits"
)

// Stats are a filter's statistics, as its methods of the same names give
// them one by one. Each kind's Stats method computes them all from one pass
// over its bits, where the methods pass once each.
type Stats struct {
	Bits           uint64
	Hashes         uint32 // 0 for a scalable filter, whose layers differ
	Count          uint64
	SetBits        uint64
	EstimatedCount float64
	FillRatio      float64
	EstimatedFPR   float64
	Capacity       uint64
	TargetFPR      float64
	OverCapacity   bool
}

// fill completes s from Bits, Hashes, SetBits, Count and Capacity, as the
// classic and counting kinds compute their statistics.
func (s *Stats) fill() {
	s.FillRatio = float64(s.SetBits) / float64(s.Bits)
	s.EstimatedCount = estimateCount(s.Bits, s.Hashes, s.SetBits)
	s.EstimatedFPR = math.Pow(s.FillRatio, float64(s.Hashes))
	if s.Capacity > 0 {
		s.OverCapacity = s.Count > s.Capacity
	} else {
		s.OverCapacity = 2*s.SetBits > s.Bits
	}
}

// Stats returns every statistic of the filter from one pass over its bits.
func (f *Filter) Stats() Stats {
	s := Stats{Bits: f.m, Hashes: f.k, Count: f.Count(), SetBits: f.SetBits(), Capacity: f.capacity, TargetFPR: f.fpRate}
	s.fill()
	return s
}

// Stats returns every statistic of the filter from one pass over its
// counters.
func (f *CountingFilter) Stats() Stats {
	s := Stats{Bits: f.m, Hashes: f.k, Count: f.Count(), SetBits: f.SetBits(), Capacity: f.capacity, TargetFPR: f.fpRate}
	s.fill()
	return s
}

// Stats returns every statistic of the filter from one pass over its
// blocks.
func (f *BlockedFilter) Stats() Stats {
	var set int
	var sum float64
	for _, b := range f.blocks {
		p := 1.0
		for _, w := range b {
			lo, hi := bits.OnesCount32(uint32(w)), bits.OnesCount32(uint32(w>>32))
			set += lo + hi
			p *= float64(lo) * float64(hi)
		}
		sum += p
	}
	s := Stats{
		Bits: f.NumBits(), Hashes: f.NumHashes(), Count: f.Count(), SetBits: uint64(set),
		Capacity: f.capacity, TargetFPR: f.fpRate,
		EstimatedCount: estimateBlockedCount(f.n, uint64(set)),
		EstimatedFPR:   sum / float64(f.n) / (1 << 40), // 32^8, as in EstimatedFPR
	}
	s.FillRatio = float64(s.SetBits) / float64(s.Bits)
	if f.capacity > 0 {
		s.OverCapacity = s.Count > f.capacity
	} else {
		s.OverCapacity = 2*s.SetBits > s.Bits
	}
	return s
}

// stats sums the layers' statistics, each from one pass over its bits, and
// also returns the last layer's; Capacity, TargetFPR and OverCapacity are
// left to the kind.
func (l *layers) stats() (Stats, Stats) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var s, last Stats
	miss := 1.0
	for _, f := range l.fs {
		last = f.Stats()
		s.Bits += last.Bits
		s.Count += last.Count
		s.SetBits += last.SetBits
		s.EstimatedCount += last.EstimatedCount
		miss *= 1 - last.EstimatedFPR
		s.Capacity += last.Capacity
		s.OverCapacity = s.OverCapacity || last.Count > last.Capacity
	}
	s.FillRatio = float64(s.SetBits) / float64(s.Bits)
	s.EstimatedFPR = 1 - miss
	return s, last
}

// Stats returns every statistic of the filter from one pass over its
// layers' bits.
func (s *ScalableFilter) Stats() Stats {
	st, last := s.stats()
	st.TargetFPR = s.fpRate
	st.OverCapacity = last.OverCapacity
	return st
}

// Stats returns every statistic of the window from one pass over its
// generations' bits.
func (w *WindowFilter) Stats() Stats {
	st, last := w.stats()
	st.Hashes = last.Hashes
	st.Capacity, st.TargetFPR = w.capacity, w.fpRate
	return st
}
