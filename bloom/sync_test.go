package bloom

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSyncManyWriters races many writers on one SyncFilter, every key added
// by several of them at once, with readers probing meanwhile. Under -race it
// proves the Adds need no lock; afterwards no bit may be lost: the bits, and
// so the encoding but for the count, are those of a Filter filled by one
// writer, and every key is present.
func TestSyncManyWriters(t *testing.T) {
	const writers, keys, copies = 16, 4000, 4 // each key is added by 4 writers
	s := must(NewSync(keys, 0.01))
	var trues atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			// Writer w adds the keys i with i%(writers/copies) == w%(writers/copies),
			// starting at different places so that the copies race.
			group, offset := w%(writers/copies), w/(writers/copies)*keys/copies
			for j := range keys {
				i := (j + offset) % keys
				if i%(writers/copies) != group {
					continue
				}
				buf = urlKey(buf, "page", i)
				if s.Add(buf) {
					trues.Add(1)
				}
				if !s.Has(buf) {
					t.Errorf("Has(%q) right after Add: got false; want true", buf)
				}
				s.HasString(string(urlKey(buf, "absent", i)))
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader of the statistics and the encoding meanwhile
		defer wg.Done()
		for range 20 {
			s.Count()
			s.SetBits()
			must(s.MarshalBinary())
		}
	}()
	wg.Wait()

	checkHasAll(t, s, "page", keys)
	f := must(New(keys, 0.01))
	addKeys(f, "page", keys)
	if !s.Snapshot().Equal(f) {
		t.Error("bits differ from a Filter filled by one writer: bits were lost")
	}
	if got := int64(s.Count()); got != trues.Load() {
		t.Errorf("Count: got %d; want %d, the number of Adds that returned true", got, trues.Load())
	}
	// Every key is new to at least one of its racing writers, except for
	// the false positives met while filling (a few tenths of a percent at
	// 1%, depending on the order); more than one may get true.
	if got := trues.Load(); got < keys*99/100 || got > keys*copies {
		t.Errorf("Adds that returned true: got %d; want at least 99%% of %d and at most %d", got, keys, keys*copies)
	}
	// With the count made equal, the encodings are byte for byte the same.
	s.f.count = f.count
	if !bytes.Equal(must(s.MarshalBinary()), must(f.MarshalBinary())) {
		t.Error("encoding differs from the Filter's")
	}
}

// TestSyncUnionWhileAdding runs Union and Intersect on a SyncFilter while
// others add to it, under -race.
func TestSyncUnionWhileAdding(t *testing.T) {
	s, o := must(NewSyncWithSize(1<<14, 5)), must(NewSyncWithSize(1<<14, 5))
	addKeys(o, "other", 500)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w == 0 {
				for range 10 {
					if err := s.Union(o); err != nil {
						t.Error(err)
					}
				}
				return
			}
			addKeys(s, "page", 1000)
		}()
	}
	wg.Wait()
	checkHasAll(t, s, "page", 1000)
	checkHasAll(t, s, "other", 500)
	if err := s.Intersect(o); err != nil {
		t.Fatal(err)
	}
	checkHasAll(t, s, "other", 500)
	if !s.Equal(o) {
		t.Error("after Intersect with a subset's superset: not Equal to it")
	}
}

func TestSyncConversions(t *testing.T) {
	f := must(NewWithSeed(4096, 4, 99))
	addKeys(f, "page", 100)
	s := NewSyncFrom(f)
	addKeys(f, "later", 10) // s holds a copy
	if s.Seed() != 99 || s.NumBits() != 4096 || s.NumHashes() != 4 || s.Count() != 100 {
		t.Errorf("NewSyncFrom: seed, m, k, count: got %d, %d, %d, %d; want 99, 4096, 4, 100", s.Seed(), s.NumBits(), s.NumHashes(), s.Count())
	}
	checkHasAll(t, s, "page", 100)
	if s.HasString("https://example.com/later/0") && s.HasString("https://example.com/later/1") {
		t.Error("NewSyncFrom shares memory with its Filter")
	}
	g := s.Snapshot()
	addKeys(s, "more", 10)
	checkHasAll(t, g, "page", 100)
	if g.Count() != 100 {
		t.Errorf("Snapshot: Count %d; want 100", g.Count())
	}

	// Unmarshal, ReadFrom and the stats.
	var u SyncFilter
	if err := u.UnmarshalBinary(must(s.MarshalBinary())); err != nil {
		t.Fatal(err)
	}
	if !u.Equal(s) || u.Count() != s.Count() || u.SetBits() != s.SetBits() || u.EstimatedFPR() != s.EstimatedFPR() {
		t.Error("UnmarshalBinary: not the same filter")
	}
	var r SyncFilter
	if _, err := r.ReadFrom(bytes.NewReader(must(s.MarshalBinary()))); err != nil || !r.Equal(s) {
		t.Errorf("ReadFrom: %v, or not the same filter", err)
	}
	if err := r.UnmarshalBinary(must(must(NewCounting(100, 0.01)).MarshalBinary())); !errors.Is(err, ErrKind) {
		t.Errorf("UnmarshalBinary of a counting filter: got %v; want ErrKind", err)
	}
	if _, err := DecodeSync(bytes.NewReader([]byte("EBLM")), DefaultMaxBits); err == nil {
		t.Error("DecodeSync of 4 bytes: no error")
	}

	// Incompatible filters are refused and left unchanged.
	other := must(NewSyncWithSize(4096, 4)) // seed 0
	before := must(s.MarshalBinary())
	if err := s.Union(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Union with another seed: got %v; want ErrIncompatible", err)
	}
	if err := s.Intersect(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Intersect with another seed: got %v; want ErrIncompatible", err)
	}
	if !bytes.Equal(before, must(s.MarshalBinary())) || s.Equal(other) {
		t.Error("an incompatible Union or Intersect changed the filter, or Equal ignored the seed")
	}
	s.Clear()
	if s.Count() != 0 || s.SetBits() != 0 || s.HasString("https://example.com/page/0") {
		t.Error("Clear left keys")
	}

	// Capacity and target come from NewSync.
	n := must(NewSync(1000, 0.01))
	if n.Capacity() != 1000 || n.TargetFPR() != 0.01 || n.OverCapacity() || n.FillRatio() != 0 || n.EstimatedCount() != 0 {
		t.Error("NewSync: wrong capacity, target or empty statistics")
	}
	if len(n.Locations([]byte("x"))) != int(n.NumHashes()) {
		t.Error("Locations: not k positions")
	}
	if n.EncodedSize() != uint64(len(must(n.MarshalBinary()))) {
		t.Error("EncodedSize differs from the encoding's length")
	}
}
