package bloom

import (
	"math"
	"testing"
)

// TestScalableGrows adds 100 times the initial capacity and checks that the
// filter grew by layers while its false-positive rate stayed at the target.
func TestScalableGrows(t *testing.T) {
	const initial, p, n, probes = 1000, 0.01, 100 * 1000, 200_000
	s := must(NewScalable(initial, p))
	if s.Layers() != 1 || s.InitialCapacity() != initial || s.Capacity() != initial || s.TargetFPR() != p {
		t.Fatalf("new: Layers %d, InitialCapacity %d, Capacity %d, TargetFPR %g; want 1, %d, %d, %g",
			s.Layers(), s.InitialCapacity(), s.Capacity(), s.TargetFPR(), initial, initial, p)
	}
	addKeys(s, "a", n)
	checkHasAll(t, s, "a", n)

	// Layer i holds initial·2^i keys: 1000·(2^7 - 1) = 127 000 ≥ 100 000.
	if got := s.Layers(); got != 7 {
		t.Errorf("Layers after %d keys: got %d; want 7", n, got)
	}
	for i := range s.Layers() {
		l := s.Layer(i)
		wantCap, wantP := uint64(initial)<<i, p*0.8*math.Pow(0.5, float64(i+1))
		if l.Capacity() != wantCap || math.Abs(l.TargetFPR()-wantP) > 1e-15 {
			t.Errorf("layer %d: Capacity %d, TargetFPR %g; want %d, %g", i, l.Capacity(), l.TargetFPR(), wantCap, wantP)
		}
		if i < s.Layers()-1 && l.Count() != l.Capacity() {
			t.Errorf("full layer %d: Count %d; want its Capacity %d", i, l.Count(), l.Capacity())
		}
	}
	// An Add that returns false for a new key is a false positive, which
	// happens at a rate below p all along.
	if got := s.Count(); got > n || got < n-n*p {
		t.Errorf("Count: got %d; want at most %d and at least %.0f", got, n, n-n*p)
	}
	if s.Capacity() < s.Count() || s.OverCapacity() {
		t.Errorf("Capacity %d, OverCapacity %v with Count %d; want room left", s.Capacity(), s.OverCapacity(), s.Count())
	}
	if got := float64(countHas(s, "fresh", probes)) / probes; got > p {
		t.Errorf("false-positive rate on fresh keys: got %.5f; want at most %g", got, p)
	}
	if got := s.EstimatedFPR(); got > p {
		t.Errorf("EstimatedFPR: got %.5f; want at most %g", got, p)
	}
	if got := s.EstimatedCount(); math.Abs(got-n) > 0.03*n {
		t.Errorf("EstimatedCount: got %.0f; want %d ± 3%%", got, n)
	}
	roundTrip(t, s)
}

func TestScalableAddReportsNew(t *testing.T) {
	s := must(NewScalable(4, 0.001))
	var buf []byte
	added := 0
	for i := range 100 {
		buf = urlKey(buf, "a", i)
		if s.Add(buf) {
			added++
		}
		if s.AddString(string(buf)) {
			t.Errorf("second AddString(%q): got true; want false", buf)
		}
	}
	// Few false positives, and 4 + 8 + 16 + 32 < added ≤ 4 + … + 64.
	if added < 95 || s.Count() != uint64(added) || s.Layers() != 5 {
		t.Errorf("after 100 keys from capacity 4: %d new, Count %d, Layers %d; want at least 95, the same, 5", added, s.Count(), s.Layers())
	}
}

func TestScalableClear(t *testing.T) {
	s := must(NewScalable(10, 0.01))
	empty := must(s.MarshalBinary())
	addKeys(s, "a", 1000)
	s.Clear()
	if s.Layers() != 1 || s.Count() != 0 || s.SetBits() != 0 || countHas(s, "a", 1000) != 0 {
		t.Errorf("after Clear: Layers %d, Count %d, SetBits %d; want 1, 0, 0 and no keys", s.Layers(), s.Count(), s.SetBits())
	}
	if got := must(s.MarshalBinary()); string(got) != string(empty) {
		t.Errorf("encoding after Clear differs from a new filter's")
	}
	addKeys(s, "a", 1000)
	checkHasAll(t, s, "a", 1000)
}

// TestScalableStopsGrowing checks a filter whose next layer would be too
// large: it keeps filling its last layer and reports OverCapacity.
func TestScalableStopsGrowing(t *testing.T) {
	// Layer 0 needs 64 hash functions, MaxHashes; layer 1, at half the
	// rate, would need 65.
	s := must(NewScalable(2, 1e-19))
	if k := s.Layer(0).NumHashes(); k != MaxHashes {
		t.Fatalf("layer 0 has %d hash functions; want %d for this test", k, MaxHashes)
	}
	addKeys(s, "a", 20)
	checkHasAll(t, s, "a", 20)
	if s.Layers() != 1 || !s.OverCapacity() {
		t.Errorf("Layers %d, OverCapacity %v; want 1, true", s.Layers(), s.OverCapacity())
	}
}

// TestScalableLayersBound checks that a scalable filter stops growing
// (MaxBits or MaxHashes) before MaxLayers, which the decoder enforces: every
// filter it makes encodes to a record it reads back.
func TestScalableLayersBound(t *testing.T) {
	for _, c := range []uint64{1, 1000} {
		for _, p := range []float64{0.5, 0.01, 1e-9} {
			s := &ScalableFilter{capacity: c, fpRate: p}
			layers := 0
			for {
				n, q := s.layerParams(layers)
				if _, _, err := Optimal(n, q); n == 0 || err != nil {
					break
				}
				layers++
			}
			if layers >= MaxLayers {
				t.Errorf("NewScalable(%d, %g) can grow to %d layers; MaxLayers is %d", c, p, layers, MaxLayers)
			}
		}
	}
}
