package redisfilter

import (
	"context"
	"testing"

	"github.com/edgebloom/edgebloom/redisfilter/redistest"
)

// TestAddClaimed checks what a process that picks up a dead one's work
// relies on: the claim that made a key new answers true again, any other
// claim false, and after Unclaim the claim answers as any other; the
// claim's key lies in the slot of the key's shard, on a filter of several
// shards and on one whose name has a hash tag.
func TestAddClaimed(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	defer c.Close()
	ctx := context.Background()
	for _, cfg := range []struct {
		name   string
		shards int
	}{{"claims", 3}, {"{tagged}", 1}} {
		f, err := NewWithConfig(ctx, c, cfg.name, Config{Capacity: 3000, FPRate: 1e-6, Shards: cfg.shards})
		if err != nil {
			t.Fatal(err)
		}
		for i, key := range urls("claim", 20) {
			a, b := "a-"+key[8:20], "b"
			if ok, err := f.AddClaimed(ctx, key, a); !ok || err != nil {
				t.Fatalf("%s: AddClaimed of a new key %d: %v, %v; want true", cfg.name, i, ok, err)
			}
			if ok, err := f.AddClaimed(ctx, key, a); !ok || err != nil {
				t.Fatalf("%s: AddClaimed again with the claim that made key %d new: %v, %v; want true", cfg.name, i, ok, err)
			}
			if ok, err := f.AddClaimed(ctx, key, b); ok || err != nil {
				t.Fatalf("%s: AddClaimed of key %d with another claim: %v, %v; want false", cfg.name, i, ok, err)
			}
			if has, err := f.Has(ctx, key); !has || err != nil {
				t.Fatalf("%s: Has after AddClaimed: %v, %v", cfg.name, has, err)
			}
			if err := f.Unclaim(ctx, key, a); err != nil {
				t.Fatal(err)
			}
			if ok, err := f.AddClaimed(ctx, key, a); ok || err != nil {
				t.Fatalf("%s: AddClaimed after Unclaim: %v, %v; want false", cfg.name, ok, err)
			}
		}
		if n, err := f.Count(ctx); n != 20 || err != nil {
			t.Errorf("%s: Count after 20 keys added with claims: %d, %v", cfg.name, n, err)
		}
		if left, err := c.Keys(ctx, "*claim:*").Result(); len(left) != 0 || err != nil {
			t.Errorf("%s: claims left after Unclaim: %v %v", cfg.name, left, err)
		}
		if _, err := f.AddClaimed(ctx, "k", ""); err == nil {
			t.Error("AddClaimed with an empty claim: no error")
		}
	}
}
