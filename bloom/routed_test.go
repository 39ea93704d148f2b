package bloom

import (
	"fmt"
	"testing"

	"github.com/edgebloom/edgebloom/internal/engine"
)

// TestRouted checks a sharded filter's batches (engine.Route, then
// engine.Batch) against Add and Has on the shard the router's first
// location names, key by key and bit for bit, for keys back to back and in
// slots, with keys repeated within a group.
func TestRouted(t *testing.T) {
	for _, shards := range []int{2, 4, 16} {
		for _, stride := range []int{0, 128} {
			t.Run(fmt.Sprintf("%d shards, stride %d", shards, stride), func(t *testing.T) {
				router, _ := NewWithSeed(uint64(shards), 1, 0x9e3779b97f4a7c15)
				var batched, single []*Filter
				r := engine.Route(nil, router)
				for range shards {
					a, _ := New(2000, 0.01)
					b, _ := New(2000, 0.01)
					batched, single = append(batched, a), append(single, b)
					r = engine.Route(r, a)
				}
				var text []byte
				var lens []uint32
				var keys []string
				for i := range 3000 {
					k := fmt.Sprintf("https://example.com/%d/%x", i, i*i)
					if i%5 == 4 {
						k = keys[i-1-i%min(i, 40)]
					}
					keys = append(keys, k)
					if stride != 0 {
						text = append(text, make([]byte, stride*i-len(text))...)
					}
					text = append(text, k...)
					lens = append(lens, uint32(len(k)))
				}
				shardOf := func(k string) int { return int(router.Locations([]byte(k))[0]) }
				for _, add := range []bool{true, false} {
					out := make([]byte, len(keys))
					if got := engine.Batch(r, text, stride, lens, out, add); got != engine.Done {
						t.Fatalf("Batch = %d", got)
					}
					for i, k := range keys {
						f := single[shardOf(k)]
						want := f.HasString(k)
						if add {
							want = f.AddString(k)
						}
						if out[i] != b2u8test(want) {
							t.Fatalf("add %v, key %d: batch %d, one at a time %v", add, i, out[i], want)
						}
					}
				}
				for i := range batched {
					if !batched[i].Equal(single[i]) || batched[i].Count() != single[i].Count() {
						t.Fatalf("shard %d: the batch and Add set different bits or counts", i)
					}
				}
			})
		}
	}
}

// TestRouteRefuses checks that Route takes only classic filters, and shards
// of one seed.
func TestRouteRefuses(t *testing.T) {
	router, _ := NewWithSeed(2, 1, 0x9e3779b97f4a7c15)
	a, _ := NewWithSeed(64, 3, 0)
	b, _ := NewWithSeed(64, 3, 1)
	c, _ := NewCounting(100, 0.01)
	if engine.Route(engine.Route(engine.Route(nil, router), a), b) != nil {
		t.Error("shards of two seeds were taken")
	}
	if engine.Route(engine.Route(nil, router), c) != nil || engine.Route(nil, c) != nil {
		t.Error("a counting filter was taken")
	}
}
