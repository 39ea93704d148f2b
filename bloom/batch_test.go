package bloom

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
)

// A batcher is a kind with batches.
type batcher interface {
	set
	many
}

// many is the batch calls every kind has.
type many interface {
	AddMany(keys [][]byte, dst []bool) []bool
	HasMany(keys [][]byte, dst []bool) []bool
	AddManyString(keys []string, dst []bool) []bool
	HasManyString(keys []string, dst []bool) []bool
}

var (
	_ batcher = (*Filter)(nil)
	_ batcher = (*SyncFilter)(nil)
	_ batcher = (*BlockedFilter)(nil)
	_ batcher = (*CountingFilter)(nil)
	_ batcher = (*ScalableFilter)(nil)
	_ batcher = (*WindowFilter)(nil)
)

// batchKinds makes a pair of equal empty filters of each kind: one for
// single calls, one for batches. The sizes are small, so that the filters
// fill up (false positives, saturated counters, a scalable filter's new
// layers) within the test's keys.
var batchKinds = []struct {
	name string
	make func() batcher
}{
	{"Filter", func() batcher { return must(New(2000, 0.01)) }},
	{"Filter/tiny", func() batcher { return must(NewWithSize(512, 3)) }},
	{"Filter/seed", func() batcher { return must(NewWithSeed(20000, 7, 42)) }},
	{"SyncFilter", func() batcher { return must(NewSync(2000, 0.01)) }},
	{"BlockedFilter", func() batcher { return must(NewBlocked(2000, 0.01)) }},
	{"BlockedFilter/tiny", func() batcher { return must(NewBlockedWithSize(4)) }},
	{"CountingFilter", func() batcher { return must(NewCounting(2000, 0.01)) }},
	{"CountingFilter/tiny", func() batcher { return must(NewCountingWithSize(256, 4)) }},
	{"ScalableFilter", func() batcher { return must(NewScalable(100, 0.01)) }},
	{"WindowFilter", func() batcher { return must(NewWindow(500, 0.01, 3)) }},
}

// batchKey is key i of the batch tests.
func batchKey(i int) string { return fmt.Sprintf("https://example.com/batch/%d?q=%x", i, i*7919) }

// TestBatchEqualsSingle checks, on every kind, that AddMany, HasMany and
// their String forms give exactly the answers of single calls made in
// order, and leave the same bits: batches of every length from 0 to 70
// (across the group of 16), keys repeated within a batch and across
// batches, and probes of added and never-added keys.
func TestBatchEqualsSingle(t *testing.T) {
	for _, kind := range batchKinds {
		for _, strs := range []bool{false, true} {
			name := kind.name + "/bytes"
			if strs {
				name = kind.name + "/strings"
			}
			t.Run(name, func(t *testing.T) {
				single, batch := kind.make(), kind.make()
				rng := rand.New(rand.NewPCG(1, 2))
				next := 0
				var dst []bool
				for round := range 120 {
					n := round % 71
					keys := make([]string, n)
					for i := range keys {
						switch r := rng.IntN(10); {
						case r < 6 || next == 0: // new
							keys[i] = batchKey(next)
							next++
						case r < 8 && i > 0: // repeated inside this batch
							keys[i] = keys[rng.IntN(i)]
						default: // seen in an earlier batch
							keys[i] = batchKey(rng.IntN(next))
						}
					}
					probes := make([]string, n)
					for i := range probes {
						probes[i] = batchKey(rng.IntN(2*next + 1)) // half never added
					}
					// dst starts non-empty: answers are appended.
					dst = append(dst[:0], true, false)
					got := batchCall(batch, true, strs, keys, dst)
					if len(got) != n+2 || !got[0] || got[1] {
						t.Fatalf("round %d: AddMany returned %d answers after dst's 2 (%v %v); want %d", round, len(got)-2, got[0], got[1], n)
					}
					for i, k := range keys {
						if want := single.AddString(k); got[i+2] != want {
							t.Fatalf("round %d: AddMany answer %d for %q: got %v; want %v (Add)", round, i, k, got[i+2], want)
						}
					}
					got = batchCall(batch, false, strs, probes, nil)
					for i, k := range probes {
						if want := single.HasString(k); got[i] != want {
							t.Fatalf("round %d: HasMany answer %d for %q: got %v; want %v (Has)", round, i, k, got[i], want)
						}
					}
					if w, ok := single.(*WindowFilter); ok && round%25 == 24 {
						w.Rotate()
						batch.(*WindowFilter).Rotate()
					}
				}
				if single.Count() != batch.Count() {
					t.Errorf("Count: batch %d; single %d", batch.Count(), single.Count())
				}
				if a, b := must(single.MarshalBinary()), must(batch.MarshalBinary()); !bytes.Equal(a, b) {
					t.Errorf("MarshalBinary differs between the filter filled by batches and the one filled by single calls")
				}
				if s, ok := batch.(*ScalableFilter); ok && s.Layers() < 3 {
					t.Errorf("scalable filter has %d layers; the test meant to grow it past 2", s.Layers())
				}
			})
		}
	}
}

// batchCall runs AddMany (add) or HasMany on f, with the keys as strings
// (strs) or byte slices.
func batchCall(f many, add, strs bool, keys []string, dst []bool) []bool {
	if strs {
		if add {
			return f.AddManyString(keys, dst)
		}
		return f.HasManyString(keys, dst)
	}
	bs := make([][]byte, len(keys))
	for i, k := range keys {
		bs[i] = []byte(k)
	}
	if add {
		return f.AddMany(bs, dst)
	}
	return f.HasMany(bs, dst)
}

// TestBatchVectors replays the golden vectors with batches: the adds of
// each case in batches (split where a window case rotates), the probes in
// one batch. Answers, counts and encodings must be the vectors'.
func TestBatchVectors(t *testing.T) {
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	cases := append(slices.Clone(v.Filters), v.Blocked...)
	for _, c := range v.Filters {
		if c.Kind == "classic" {
			c.sync = true
			c.Name += "/SyncFilter"
			cases = append(cases, c)
		}
	}
	for ci, c := range cases {
		if len(c.Removed) > 0 {
			c.Removed = nil // removal has no batch form; the adds and encoding before it are checked below
		}
		for _, strs := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/strings=%v", c.Name, strs), func(t *testing.T) {
				f0, err := c.newFilter()
				if err != nil {
					t.Fatal(err)
				}
				f := f0.(batcher)
				// Batches of 1 to 40 keys, cut at rotations, with every
				// added key repeated right after itself in a second
				// batch pass of the first 10 keys.
				var got []bool
				cuts := map[int]bool{}
				for _, r := range c.Rotations {
					cuts[r] = true
				}
				size := 1 + ci%40
				start := 0
				for j := 0; j <= len(c.Added); j++ {
					if j == len(c.Added) || cuts[j] || j-start == size {
						keys := make([]string, 0, j-start)
						for _, i := range c.Added[start:j] {
							keys = append(keys, v.Keys[i])
						}
						got = batchCall(f, true, strs, keys, got)
						start = j
					}
					if cuts[j] {
						f.(*WindowFilter).Rotate()
					}
				}
				if !slices.Equal(got, c.AddResults) {
					t.Fatalf("AddMany answers differ from the vectors' addResults:\n got %v\nwant %v", got, c.AddResults)
				}
				if c.Removed == nil && len(c.RemoveResults) > 0 {
					// The counting case removes keys after its adds; the
					// state before the removals is compared with single
					// calls instead of the vector's encoding.
					single, _ := c.newFilter()
					for _, i := range c.Added {
						single.AddString(v.Keys[i])
					}
					if !bytes.Equal(must(single.MarshalBinary()), must(f.MarshalBinary())) {
						t.Errorf("after the adds, the batch-filled filter's encoding differs from the one filled by single calls")
					}
					return
				}
				if has := batchCall(f, false, strs, c.Probes, nil); !slices.Equal(has, c.Has) {
					t.Errorf("HasMany answers differ from the vectors' has:\n got %v\nwant %v", has, c.Has)
				}
				b := must(f.MarshalBinary())
				if enc := base64.StdEncoding.EncodeToString(b); enc != c.Base64 {
					t.Errorf("MarshalBinary after batches differs from the vectors' base64")
				}
				if f.Count() != c.Count || f.SetBits() != c.SetBits {
					t.Errorf("count, setBits: got %d, %d; want %d, %d", f.Count(), f.SetBits(), c.Count, c.SetBits)
				}
			})
		}
	}
}

// TestBatchConcurrent runs batches of SyncFilter, WindowFilter and
// ScalableFilter from several goroutines at once (with -race in build.sh),
// overlapping each other's keys: afterwards every key is present, and
// every distinct key was reported new by at least one goroutine unless it
// was a false positive of the keys before it.
func TestBatchConcurrent(t *testing.T) {
	for _, kind := range []struct {
		name string
		f    batcher
	}{
		{"SyncFilter", must(NewSync(40000, 0.01))},
		{"WindowFilter", must(NewWindow(40000, 0.01, 2))},
		{"ScalableFilter", must(NewScalable(1000, 0.01))},
		{"CountingFilter", must(NewCounting(40000, 0.01))},
	} {
		t.Run(kind.name, func(t *testing.T) {
			const workers, perWorker = 4, 5000
			var wg sync.WaitGroup
			news := make([]int, workers)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var dst []bool
					for b := 0; b < perWorker; b += 50 {
						keys := make([]string, 50)
						for i := range keys {
							keys[i] = batchKey(w*perWorker/2 + b + i) // half shared with the next worker
						}
						dst = kind.f.AddManyString(keys, dst[:0])
						for _, fresh := range dst {
							if fresh {
								news[w]++
							}
						}
						if got := kind.f.HasManyString(keys, dst[:0]); slices.Contains(got, false) {
							t.Errorf("worker %d: a key added by AddManyString is absent right after", w)
							return
						}
					}
				}()
			}
			wg.Wait()
			distinct := (workers + 1) * perWorker / 2
			keys := make([]string, distinct)
			for i := range keys {
				keys[i] = batchKey(i)
			}
			if got := kind.f.HasManyString(keys, nil); slices.Contains(got, false) {
				t.Errorf("false negative after concurrent batches")
			}
			total := 0
			for _, n := range news {
				total += n
			}
			if total < distinct*97/100 || total > workers*perWorker {
				t.Errorf("%d keys reported new of %d distinct keys", total, distinct)
			}
		})
	}
}

// TestBatchNoAlloc checks that a batch into a dst with room allocates
// nothing.
func TestBatchNoAlloc(t *testing.T) {
	keys := make([]string, 100)
	bkeys := make([][]byte, 100)
	for i := range keys {
		keys[i] = batchKey(i)
		bkeys[i] = []byte(keys[i])
	}
	dst := make([]bool, 0, 100)
	for _, kind := range batchKinds {
		f := kind.make()
		if a := testing.AllocsPerRun(20, func() { f.AddManyString(keys, dst[:0]); f.HasMany(bkeys, dst[:0]) }); a != 0 {
			t.Errorf("%s: %v allocations a batch; want 0", kind.name, a)
		}
	}
}
