package snapshot

import (
	"bytes"
	"errors"
	"testing"
)

// Consecutive deltas merged are, byte for byte, the delta the service
// makes from the first one's cursor to the last one's: each shard's
// record from its first From to its last To, every position once; a shard
// none of them changed has no record.
func TestDeltaMerger(t *testing.T) {
	sv := newService(t, 3)
	start := sv.cursor()
	var g DeltaMerger
	if g.Delta() != nil {
		t.Fatal("an empty merger made a delta")
	}
	at := start
	for round := range 5 {
		// Keys again (positions set twice) and new ones.
		sv.add(keys(0, 10*(round+1))...)
		next := sv.delta(at)
		if err := g.Add(next); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		at = sv.cursor()
		if want, got := sv.delta(start), g.Delta(); !bytes.Equal(got, want) {
			t.Fatalf("round %d: merged %d bytes, not the service's %d", round, len(got), len(want))
		}
	}
	// A delta that does not start where the merge ends is refused.
	sv.add(keys(100, 120)...)
	if err := g.Add(sv.delta(start)); !errors.Is(err, ErrDeltaMismatch) {
		t.Fatalf("a delta from the start again: %v; want ErrDeltaMismatch", err)
	}
	// A record with the shard whole is not merged.
	var w DeltaMerger
	if err := w.Add(sv.delta(start, 1)); err == nil {
		t.Fatal("a record with its shard whole was merged")
	}
}

// What a merger holds is its bitsets: a delta of many positions adds
// nothing to it past MergeBytes.
func TestDeltaMergerBytes(t *testing.T) {
	if got := MergeBytes(1000, 4); got != 4*8*16 {
		t.Fatalf("MergeBytes(1000, 4) = %d", got)
	}
	sv := newService(t, 2)
	start := sv.cursor()
	sv.add(keys(0, 2000)...)
	d := sv.delta(start)
	if got, bound := uint64(len(d)), MergedDeltaBytes(sv.shards[0].NumBits(), 2); got > bound {
		t.Fatalf("a delta of %d bytes is over MergedDeltaBytes %d", got, bound)
	}
}
