package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

func newSharded(t testing.TB, capacity uint64, shards int) *Sharded {
	t.Helper()
	return newShardedOf(t, capacity, 0.01, shards)
}

// NewSharded makes the shards the service makes (ceil(capacity/shards)
// each, seed 0) and the router for their number; a key goes to the shard
// Route names, and Add tests and adds as bloom.Filter's does.
func TestNewSharded(t *testing.T) {
	s := newSharded(t, 10001, 4)
	if len(s.Shards) != 4 || !s.Router.Equal(Router(4)) {
		t.Fatalf("%d shards, router %v", len(s.Shards), s.Router)
	}
	want, _ := bloom.New(2501, 0.01)
	for i, f := range s.Shards {
		if !f.Equal(want) || f.Capacity() != 2501 || f.TargetFPR() != 0.01 {
			t.Fatalf("shard %d: m = %d, k = %d, capacity %d; want bloom.New(2501, 0.01)", i, f.NumBits(), f.NumHashes(), f.Capacity())
		}
	}
	for _, k := range keys(0, 500) {
		if !s.AddString(k) {
			t.Fatalf("AddString(%q) of a new key: false", k)
		}
		if s.AddString(k) || s.Add([]byte(k)) {
			t.Fatalf("AddString(%q) again: true", k)
		}
		if !s.Shards[Route(s.Router, k)].HasString(k) {
			t.Fatalf("%q is not in the shard Route names", k)
		}
		if !s.HasString(k) || !s.Has([]byte(k)) {
			t.Fatalf("Has(%q): false", k)
		}
	}
	if s.Count() != 500 {
		t.Fatalf("Count %d; want 500", s.Count())
	}
	if ShardCapacity(math.MaxUint64, 2) != 1<<63 || ShardCapacity(20000, 4) != 5000 || ShardCapacity(5, 4) != 2 {
		t.Fatal("ShardCapacity is not ceil(capacity/shards)")
	}
}

func TestNewShardedArguments(t *testing.T) {
	for _, c := range []struct {
		capacity uint64
		fpRate   float64
		shards   int
		arg      string
	}{
		{1000, 0.01, 1, "shards"},
		{1000, 0.01, 0, "shards"},
		{1000, 0.01, -3, "shards"},
		{1000, 0.01, MaxShards + 1, "shards"},
		{0, 0.01, 4, "capacity"},
		{1000, 1, 4, "fpRate"},
		{1000, math.NaN(), 4, "fpRate"},
		{math.MaxUint64, 0.01, 2, "capacity"}, // a shard over bloom.MaxBits: refused before allocating
	} {
		s, err := NewSharded(c.capacity, c.fpRate, c.shards)
		var ae *bloom.ArgError
		if s != nil || !errors.As(err, &ae) || ae.Arg != c.arg {
			t.Errorf("NewSharded(%d, %g, %d): %v; want a bloom.ArgError naming %s", c.capacity, c.fpRate, c.shards, err, c.arg)
		}
	}
}

// A batch answers as the loop of single calls does, in key order, on a
// filter left with the same bytes: keys repeated inside the batch, more
// keys than a chunk, byte slices and strings, and dst's prefix kept.
func TestShardedBatches(t *testing.T) {
	for _, shards := range []int{2, 4, 16, 64} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			batch, single := newSharded(t, 6000, shards), newSharded(t, 6000, shards)
			ks := append(keys(0, 5000), keys(100, 200)...)
			ks = append(ks, "", "café", "例え", "😀", "café")
			var want []bool
			for _, k := range ks {
				want = append(want, single.AddString(k))
			}
			got := batch.AddManyString(ks, []bool{true})
			if got[0] != true || fmt.Sprint(got[1:]) != fmt.Sprint(want) {
				t.Fatal("AddManyString does not answer as AddString in a loop")
			}
			if !batch.Equal(single) || batch.Count() != single.Count() {
				t.Fatal("AddManyString left other bits or another count than AddString in a loop")
			}
			probe := append(keys(4900, 5200), "café", "é")
			bs := make([][]byte, len(probe))
			want = want[:0]
			for i, k := range probe {
				bs[i] = []byte(k)
				want = append(want, single.HasString(k))
			}
			for name, got := range map[string][]bool{
				"HasManyString": batch.HasManyString(probe, nil),
				"HasMany":       batch.HasMany(bs, make([]bool, 0, len(bs))),
			} {
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s does not answer as HasString in a loop", name)
				}
			}
			more := keys(9000, 9100)
			bs = bs[:0]
			want = want[:0]
			for _, k := range more {
				bs = append(bs, []byte(k))
				want = append(want, single.Add([]byte(k)))
			}
			if fmt.Sprint(batch.AddMany(bs, nil)) != fmt.Sprint(want) || !batch.Equal(single) {
				t.Fatal("AddMany does not answer as Add in a loop")
			}
			if got := batch.HasManyString(nil, nil); len(got) != 0 {
				t.Fatal("a batch of no keys answered")
			}
		})
	}
}

// Readers may run batches at once (go test -race checks they share nothing
// but the pool).
func TestShardedConcurrentReaders(t *testing.T) {
	s := newSharded(t, 20000, 4)
	ks := keys(0, 10000)
	s.AddManyString(ks, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, ok := range s.HasManyString(ks, nil) {
				if !ok {
					t.Error("a key added is reported absent")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Every statistic is its shards' total as the service's GET of a filter
// and the npm module's ShardedBloomFilter.stats() total them, and Stats
// gives the same as the methods one by one; on 2, 4 and 16 shards.
func TestShardedStats(t *testing.T) {
	for _, shards := range []int{2, 4, 16} {
		s := newSharded(t, 4000, shards)
		s.AddManyString(keys(0, 4500), nil) // over capacity in some shard
		var bits, count, set, capacity uint64
		var est, fpr float64
		over := false
		for _, f := range s.Shards {
			bits += f.NumBits()
			count += f.Count()
			set += f.SetBits()
			capacity += f.Capacity()
			est += f.EstimatedCount()
			fpr += f.EstimatedFPR()
			over = over || f.OverCapacity()
		}
		want := bloom.Stats{
			Bits: bits, Hashes: s.Shards[0].NumHashes(), Count: count, SetBits: set,
			EstimatedCount: est, FillRatio: float64(set) / float64(bits), EstimatedFPR: fpr / float64(shards),
			Capacity: capacity, TargetFPR: 0.01, OverCapacity: over,
		}
		one := bloom.Stats{
			Bits: s.NumBits(), Hashes: s.NumHashes(), Count: s.Count(), SetBits: s.SetBits(),
			EstimatedCount: s.EstimatedCount(), FillRatio: s.FillRatio(), EstimatedFPR: s.EstimatedFPR(),
			Capacity: s.Capacity(), TargetFPR: s.TargetFPR(), OverCapacity: s.OverCapacity(),
		}
		if !statsNear(s.Stats(), want) || !statsNear(one, want) {
			t.Errorf("%d shards: Stats %+v, methods %+v; want %+v", shards, s.Stats(), one, want)
		}
		if count > 4500 || count < 4400 || capacity != 4000 || !over || s.Seed() != 0 {
			t.Errorf("%d shards: count %d, capacity %d, over %v", shards, count, capacity, over)
		}
	}
	// A shard with every bit set has an infinite estimate, and so has the filter.
	s := newSharded(t, 2, 2)
	s.AddManyString(keys(0, 200), nil)
	if !math.IsInf(s.EstimatedCount(), 1) || s.FillRatio() != 1 || s.EstimatedFPR() != 1 {
		t.Errorf("a full filter: estimated count %g, fill %g, fpr %g", s.EstimatedCount(), s.FillRatio(), s.EstimatedFPR())
	}
}

// statsNear compares statistics, the floating ones to 1e-12 relative.
func statsNear(a, b bloom.Stats) bool {
	near := func(x, y float64) bool { return x == y || math.Abs(x-y) <= 1e-12*math.Abs(y) }
	fa, fb := a, b
	fa.EstimatedCount, fa.FillRatio, fa.EstimatedFPR = 0, 0, 0
	fb.EstimatedCount, fb.FillRatio, fb.EstimatedFPR = 0, 0, 0
	return fa == fb && near(a.EstimatedCount, b.EstimatedCount) && near(a.FillRatio, b.FillRatio) && near(a.EstimatedFPR, b.EstimatedFPR)
}

// The container round-trips through MarshalBinary, WriteTo and
// UnmarshalBinary; Clear, Union and Intersect work shard by shard, and a
// Union of another shape is refused leaving the filter as it was.
func TestShardedEncodingAndSets(t *testing.T) {
	a := newSharded(t, 2000, 4)
	a.AddManyString(keys(0, 1000), nil)
	data, err := a.MarshalBinary()
	if err != nil || uint64(len(data)) != a.EncodedSize() {
		t.Fatalf("MarshalBinary: %d bytes, %v; EncodedSize %d", len(data), err, a.EncodedSize())
	}
	var buf bytes.Buffer
	if n, err := a.WriteTo(&buf); err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	var b Sharded
	if err := b.UnmarshalBinary(data); err != nil || !b.Equal(a) || b.Count() != a.Count() {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if err := b.UnmarshalBinary(data[:len(data)-1]); err == nil || !b.Equal(a) {
		t.Fatalf("UnmarshalBinary of a truncated container: %v, or the filter changed", err)
	}
	c := newSharded(t, 2000, 4)
	c.AddManyString(keys(1000, 2000), nil)
	if err := c.Union(a); err != nil {
		t.Fatal(err)
	}
	for _, ok := range c.HasManyString(keys(0, 2000), nil) {
		if !ok {
			t.Fatal("a key of either is absent from the union")
		}
	}
	if err := c.Intersect(a); err != nil || !c.Equal(a) && c.SetBits() > a.SetBits() {
		t.Fatalf("Intersect: %v", err)
	}
	before, _ := c.MarshalBinary()
	for _, o := range []*Sharded{newSharded(t, 2000, 2), newSharded(t, 4000, 4)} {
		if err := c.Union(o); !errors.Is(err, bloom.ErrIncompatible) {
			t.Fatalf("Union of another shape: %v", err)
		}
	}
	if after, _ := c.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("a refused Union changed the filter")
	}
	c.Clear()
	if c.Count() != 0 || c.SetBits() != 0 {
		t.Fatal("Clear left keys")
	}
}
