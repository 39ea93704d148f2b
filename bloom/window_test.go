package bloom

import (
	"errors"
	"math"
	"sync"
	"testing"
)

// TestWindowRotate follows keys through the generations: present until
// generations rotations have passed since their last Add.
func TestWindowRotate(t *testing.T) {
	const n = 500
	w := must(NewWindow(n, 0.001, 3))
	if w.Generations() != 3 || w.Capacity() != n || w.TargetFPR() != 0.001 || w.Count() != 0 {
		t.Fatalf("new: Generations %d, Capacity %d, TargetFPR %g, Count %d; want 3, %d, 0.001, 0",
			w.Generations(), w.Capacity(), w.TargetFPR(), w.Count(), n)
	}
	m, k := must2(Optimal(n, 0.001))
	if w.NumBits() != 3*m || w.NumHashes() != k {
		t.Errorf("NumBits, NumHashes: got %d, %d; want %d, %d", w.NumBits(), w.NumHashes(), 3*m, k)
	}
	addKeys(w, "day0", n)
	w.Rotate()
	addKeys(w, "day1", n)
	w.Rotate()
	addKeys(w, "day2", n)
	for _, name := range []string{"day0", "day1", "day2"} {
		checkHasAll(t, w, name, n)
	}
	if w.Count() < 3*n-5 {
		t.Errorf("Count: got %d; want about %d", w.Count(), 3*n)
	}
	w.Rotate() // day0 leaves
	if got := countHas(w, "day0", n); got > n/50 {
		t.Errorf("after the rotation that drops day0: %d of %d day0 keys present; want only false positives", got, n)
	}
	checkHasAll(t, w, "day1", n)
	checkHasAll(t, w, "day2", n)
	if g := w.Generation(2); g.Count() != 0 || g.SetBits() != 0 {
		t.Errorf("newest generation after Rotate: Count %d, SetBits %d; want 0, 0", g.Count(), g.SetBits())
	}
	w.Rotate()
	w.Rotate()
	if w.SetBits() != 0 || w.Count() != 0 {
		t.Errorf("after 3 rotations with no adds: SetBits %d, Count %d; want 0, 0", w.SetBits(), w.Count())
	}
}

// TestWindowAddReportsNew checks that Add reports new to the whole window,
// and still refreshes a key seen in an older generation.
func TestWindowAddReportsNew(t *testing.T) {
	w := must(NewWindow(100, 0.0001, 2))
	if !w.AddString("a") || w.AddString("a") || !w.HasString("a") || !w.Has([]byte("a")) {
		t.Fatalf("first and second Add, Has: want true, false, true, true")
	}
	w.Rotate()
	if got := w.AddString("a"); got {
		t.Errorf("Add of a key in the older generation: got true; want false")
	}
	if !w.Generation(1).HasString("a") {
		t.Errorf("Add of a key in the older generation did not add it to the newest")
	}
	w.Rotate()
	// Refreshed one rotation ago: still there.
	if !w.HasString("a") {
		t.Errorf("HasString(a) one rotation after a refresh: got false; want true")
	}
	w.Rotate()
	if w.HasString("a") {
		t.Errorf("HasString(a) two rotations after the last Add: got true; want false")
	}
	if !w.Add([]byte("a")) {
		t.Errorf("Add of a forgotten key: got false; want true")
	}
}

func TestWindowOneGeneration(t *testing.T) {
	w := must(NewWindow(10, 0.01, 1))
	w.AddString("x")
	w.Rotate()
	if w.HasString("x") || w.Count() != 0 {
		t.Errorf("a window of one generation after Rotate: Has %v, Count %d; want false, 0", w.HasString("x"), w.Count())
	}
}

func TestWindowStats(t *testing.T) {
	w := must(NewWindow(1000, 0.01, 4))
	addKeys(w, "a", 1000)
	w.Rotate()
	addKeys(w, "b", 500)
	if got := w.EstimatedCount(); math.Abs(got-1500) > 0.05*1500 {
		t.Errorf("EstimatedCount: got %.0f; want 1500 ± 5%%", got)
	}
	g0, g1 := w.Generation(2), w.Generation(3)
	want := 1 - (1-g0.EstimatedFPR())*(1-g1.EstimatedFPR())
	if got := w.EstimatedFPR(); math.Abs(got-want) > 1e-12 || got > 0.02 {
		t.Errorf("EstimatedFPR: got %g; want %g, below 2%%", got, want)
	}
	if got, want := w.FillRatio(), float64(g0.SetBits()+g1.SetBits())/float64(w.NumBits()); got != want {
		t.Errorf("FillRatio: got %g; want %g", got, want)
	}
	if w.OverCapacity() {
		t.Errorf("OverCapacity at capacity: got true; want false")
	}
	addKeys(w, "c", 600)
	if !w.OverCapacity() {
		t.Errorf("OverCapacity with 1100 keys in a generation of 1000: got false; want true")
	}
	w.Clear()
	if w.SetBits() != 0 || w.Count() != 0 || w.Generations() != 4 {
		t.Errorf("Clear: SetBits %d, Count %d, Generations %d; want 0, 0, 4", w.SetBits(), w.Count(), w.Generations())
	}
}

func TestNewWindowErrors(t *testing.T) {
	for _, tt := range []struct {
		n    uint64
		p    float64
		g    int
		want string
	}{
		{0, 0.01, 3, "capacity"},
		{10, 0, 3, "fpRate"},
		{10, 1, 3, "fpRate"},
		{10, 0.01, 0, "generations"},
		{10, 0.01, -1, "generations"},
		{1 << 36, 0.01, 1000, "generations"},
		// Tiny generations fit MaxBits, but 3e7 of them took minutes and
		// 2.9 GB: refused before anything is allocated.
		{1, 0.5, MaxGenerations + 1, "generations"},
		{1, 0.5, 30_000_000, "generations"},
	} {
		w, err := NewWindow(tt.n, tt.p, tt.g)
		var ae *ArgError
		if w != nil || !errors.As(err, &ae) || ae.Arg != tt.want {
			t.Errorf("NewWindow(%d, %g, %d): got %v, %v; want an ArgError for %s", tt.n, tt.p, tt.g, w, err, tt.want)
		}
	}
}

// TestWindowConcurrent adds, tests and rotates from many goroutines; run
// with -race.
func TestWindowConcurrent(t *testing.T) {
	w := must(NewWindow(10_000, 0.01, 3))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range 2000 {
				buf = urlKey(buf, "c", g*2000+i)
				w.Add(buf)
				if !w.Has(buf) {
					// A Rotate in between may have dropped it only when the
					// window has a single generation; here it has three.
					t.Errorf("Has right after Add: got false; want true")
					return
				}
				if i%500 == 0 {
					w.EstimatedFPR()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 2 {
			w.Rotate()
			must(w.MarshalBinary())
		}
	}()
	wg.Wait()
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}
