package bloom

import (
	"bytes"
	"testing"
)

func TestCountingRemoveAbsent(t *testing.T) {
	f := must(NewCountingWithSize(1000, 4))
	addKeys(f, "a", 100)
	before, count := must(f.MarshalBinary()), f.Count()
	var buf []byte
	removed := 0
	for i := range 200 {
		buf = urlKey(buf, "absent", i)
		if f.Has(buf) {
			continue // a false positive, not certainly absent
		}
		removed++
		if f.Remove(buf) || f.RemoveString(string(buf)) {
			t.Errorf("Remove(%q) of an absent key: got true; want false", buf)
		}
	}
	if removed < 150 {
		t.Fatalf("only %d of 200 probes certainly absent; the filter is too full for this test", removed)
	}
	if !bytes.Equal(must(f.MarshalBinary()), before) || f.Count() != count {
		t.Errorf("Remove of absent keys changed the filter")
	}
}

func TestCountingRemove(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    uint64
		k    uint32
	}{
		{"roomy", 10_000, 7},
		{"crowded", 64, 3},
		{"one counter", 1, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := must(NewCountingWithSize(tt.m, tt.k))
			a, b := "https://example.com/a", "https://example.com/b"
			if !f.AddString(a) {
				t.Errorf("AddString(%q) to an empty filter: got false; want true", a)
			}
			f.AddString(b)
			if !f.RemoveString(a) {
				t.Errorf("RemoveString(%q) of an added key: got false; want true", a)
			}
			if !f.HasString(b) {
				t.Errorf("HasString(%q) after removing %q: got false; want true", b, a)
			}
			if !f.Remove([]byte(b)) {
				t.Errorf("Remove(%q): got false; want true", b)
			}
			if f.SetBits() != 0 || f.Count() != 0 {
				t.Errorf("after removing both keys: SetBits %d, Count %d; want 0, 0", f.SetBits(), f.Count())
			}
			if f.HasString(a) || f.HasString(b) {
				t.Errorf("HasString after removing both keys: got true; want false")
			}
			if f.RemoveString(a) {
				t.Errorf("second RemoveString(%q): got true; want false", a)
			}
		})
	}
}

// TestCountingSaturation drives counters of a small filter to CounterMax and
// checks that removing keys never decrements them, so no remaining key
// disappears, while counters that never saturated count exactly.
func TestCountingSaturation(t *testing.T) {
	const m, k, removedKeys, keptKeys = 128, 3, 300, 100
	f := must(NewCountingWithSize(m, k))
	addKeys(f, "removed", removedKeys)
	addKeys(f, "kept", keptKeys)

	saturated, kept := make([]bool, m), make([]uint64, m)
	nSaturated := 0
	for i := range uint64(m) {
		if f.Counter(i) == CounterMax {
			saturated[i] = true
			nSaturated++
		}
	}
	if nSaturated == 0 || nSaturated == m {
		t.Fatalf("%d of %d counters saturated; want some but not all", nSaturated, m)
	}
	var buf []byte
	for i := range keptKeys {
		for _, p := range f.Locations(urlKey(buf, "kept", i)) {
			kept[p]++
		}
	}

	for i := range removedKeys {
		buf = urlKey(buf, "removed", i)
		if !f.Remove(buf) {
			t.Errorf("Remove(%q) of an added key: got false; want true", buf)
		}
	}
	for i := range uint64(m) {
		got := uint64(f.Counter(i))
		switch {
		case saturated[i] && got != CounterMax:
			t.Errorf("saturated counter %d after removals: got %d; want %d", i, got, CounterMax)
		case !saturated[i] && got != kept[i]:
			t.Errorf("counter %d after removals: got %d; want %d, the kept keys through it", i, got, kept[i])
		}
	}
	checkHasAll(t, f, "kept", keptKeys)
	roundTrip(t, f)
}

// TestCountingLikeClassic checks that a counting filter answers exactly as a
// classic filter of the same m and k, and reports new keys the same way.
func TestCountingLikeClassic(t *testing.T) {
	c, f := must(NewCountingWithSize(2000, 5)), must(NewWithSize(2000, 5))
	var buf []byte
	for i := range 400 {
		buf = urlKey(buf, "a", i%300) // 100 repeats
		if got, want := c.Add(buf), f.Add(buf); got != want {
			t.Errorf("Add(%q): got %v; want the classic filter's %v", buf, got, want)
		}
		if got, want := c.Locations(buf), f.Locations(buf); !slicesEqual(got, want) {
			t.Errorf("Locations(%q): got %v; want %v", buf, got, want)
		}
	}
	for i := range 2000 {
		buf = urlKey(buf, "probe", i)
		if got, want := c.Has(buf), f.Has(buf); got != want {
			t.Errorf("Has(%q): got %v; want the classic filter's %v", buf, got, want)
		}
	}
	if c.Count() != f.Count() || c.SetBits() != f.SetBits() || c.EstimatedCount() != f.EstimatedCount() || c.EstimatedFPR() != f.EstimatedFPR() || c.OverCapacity() != f.OverCapacity() {
		t.Errorf("stats differ from the classic filter's: Count %d/%d, SetBits %d/%d", c.Count(), f.Count(), c.SetBits(), f.SetBits())
	}
}

func TestCountingClearEqual(t *testing.T) {
	f := must(NewCounting(500, 0.01))
	g := must(NewCounting(500, 0.01))
	empty := must(f.MarshalBinary())
	addKeys(f, "a", 200)
	if f.Equal(g) {
		t.Errorf("Equal after adding to one: got true; want false")
	}
	addKeys(g, "a", 200)
	if !f.Equal(g) {
		t.Errorf("Equal with the same keys: got false; want true")
	}
	g.AddString("https://example.com/a/0") // a repeat raises counters
	if f.Equal(g) {
		t.Errorf("Equal after a repeated Add: got true; want false")
	}
	if f.Capacity() != 500 || f.TargetFPR() != 0.01 || f.OverCapacity() {
		t.Errorf("Capacity, TargetFPR, OverCapacity: got %d, %g, %v; want 500, 0.01, false", f.Capacity(), f.TargetFPR(), f.OverCapacity())
	}
	f.Clear()
	if got := must(f.MarshalBinary()); !bytes.Equal(got, empty) || countHas(f, "a", 200) != 0 {
		t.Errorf("after Clear: the filter differs from a new one")
	}
}
