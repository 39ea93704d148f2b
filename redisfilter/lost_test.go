package redisfilter

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
)

// calls runs every call of a handle that reads or changes its filter and
// returns their errors by name.
func calls(ctx context.Context, f *Filter, key string) map[string]error {
	return map[string]error{
		"Add":      second(f.Add(ctx, key)),
		"Has":      second(f.Has(ctx, key)),
		"AddMany":  second(f.AddMany(ctx, []string{key, key + "/2"})),
		"HasMany":  second(f.HasMany(ctx, []string{key, key + "/2"})),
		"Count":    second(f.Count(ctx)),
		"SetBits":  second(f.SetBits(ctx)),
		"Snapshot": second(f.Snapshot(ctx)),
	}
}

// TestRestartWithoutData: Redis restarts without its data (SHUTDOWN NOSAVE),
// then another process makes a filter of the same name and parameters. The
// handle on the lost filter must error, never answer from the new one: that
// its 20 000 keys are absent, or that old keys are new.
func TestRestartWithoutData(t *testing.T) {
	srv := redistest.Start(t)
	ctx := testCtx(t)
	first := srv.Client(noRetries)
	cfg := Config{Capacity: 100_000, FPRate: 0.01, Shards: 2}
	f, err := NewWithConfig(ctx, first, "crawl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := urls("r", 20_000)
	if _, err := f.AddMany(ctx, keys); err != nil {
		t.Fatal(err)
	}
	first.Do(ctx, "SHUTDOWN", "NOSAVE") // the connection closes: no reply
	srv.Kill()                          // waits for the exit
	srv.Restart()

	for what, err := range calls(ctx, f, keys[0]) {
		if !errors.Is(err, ErrLost) {
			t.Errorf("%s after the restart: got %v; want ErrLost", what, err)
		}
	}

	// A second process makes the filter again: Redis cannot tell it was
	// lost, so New makes it, with a new generation.
	second := srv.Client()
	g, err := NewWithConfig(ctx, second, "crawl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if isNew, err := g.Add(ctx, keys[0]); err != nil || !isNew {
		t.Fatalf("Add to the new filter: %v, %v", isNew, err)
	}
	for what, err := range calls(ctx, f, keys[1]) {
		if !errors.Is(err, ErrRecreated) {
			t.Errorf("%s on the lost filter's handle once the name was made again: got %v; want ErrRecreated", what, err)
		}
	}
	if has, err := f.HasMany(ctx, keys); has != nil || !errors.Is(err, ErrRecreated) {
		t.Errorf("HasMany of the old keys: got %d answers, %v; want none and ErrRecreated", len(has), err)
	}
	// Nothing the old handle tried reached the new filter.
	if n, err := g.Count(ctx); n != 1 || err != nil {
		t.Errorf("new filter's Count: %d, %v; want 1", n, err)
	}
	if ok, _ := g.Has(ctx, keys[1]); ok {
		t.Errorf("the old handle's Add reached the new filter")
	}
	// A handle opened now is the new filter's.
	h, err := Open(ctx, first, "crawl")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Has(ctx, keys[0]); !ok || err != nil {
		t.Errorf("Has on a handle opened after: %v, %v", ok, err)
	}
}

// TestLostNeedsRecreate: a filter whose shards are gone while its
// parameters are left (eviction, a partial loss) is not made again by New
// unless Config.Recreate says so; then handles on the lost one get
// ErrRecreated.
func TestLostNeedsRecreate(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	cfg := Config{Capacity: 1000, FPRate: 0.01, Shards: 3}
	f, err := NewWithConfig(ctx, c, "lost", cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.AddMany(ctx, urls("l", 300))
	c.Del(ctx, "lost:1", "{lost:1}:g")

	for _, name := range []string{"New", "Open"} {
		var err error
		if name == "New" {
			_, err = NewWithConfig(ctx, c, "lost", cfg)
		} else {
			_, err = Open(ctx, c, "lost")
		}
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "Recreate") {
			t.Errorf("%s of a lost filter: got %v; want ErrLost naming Recreate", name, err)
		}
	}
	// Keys of the intact shards are still answered; those of shard 1 and
	// calls on every shard are errors.
	var on1 string
	for _, k := range urls("x", 100) {
		if f.shard(k) == 1 && f.shard(k+"/2") == 1 {
			on1 = k
			break
		}
	}
	for what, err := range calls(ctx, f, on1) {
		if !errors.Is(err, ErrLost) {
			t.Errorf("%s on the lost filter: got %v; want ErrLost", what, err)
		}
	}
	if _, err := f.HasMany(ctx, urls("l", 300)); !errors.Is(err, ErrLost) {
		t.Errorf("HasMany on the lost filter: got %v; want ErrLost", err)
	}

	rc := cfg
	rc.Recreate = true
	g, err := NewWithConfig(ctx, c, "lost", rc)
	if err != nil {
		t.Fatalf("New with Recreate: %v", err)
	}
	if n, err := g.Count(ctx); n != 0 || err != nil {
		t.Errorf("the filter made again: Count %d, %v; want 0", n, err)
	}
	for what, err := range calls(ctx, f, "https://example.com/") {
		if !errors.Is(err, ErrRecreated) {
			t.Errorf("%s on the lost filter's handle after Recreate: got %v; want ErrRecreated", what, err)
		}
	}
	// Recreate does not touch a whole filter, and Delete of the old
	// handle does not delete the new filter.
	g.Add(ctx, "https://example.com/kept")
	if h, err := NewWithConfig(ctx, c, "lost", rc); err != nil || h.gen != g.gen {
		t.Errorf("New with Recreate over a whole filter: %v; want it opened as it is", err)
	}
	if err := f.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := g.Has(ctx, "https://example.com/kept"); !ok || err != nil {
		t.Errorf("the old handle's Delete reached the new filter: %v, %v", ok, err)
	}

	// Parameters gone, shards left: ErrLost, and Recreate clears them.
	c.Del(ctx, "lost")
	if _, err := NewWithConfig(ctx, c, "lost", cfg); !errors.Is(err, ErrLost) {
		t.Errorf("New with the parameters gone: got %v; want ErrLost", err)
	}
	if _, err := NewWithConfig(ctx, c, "lost", rc); err != nil {
		t.Errorf("New with Recreate, the parameters gone: %v", err)
	}
	if _, err := g.Has(ctx, "https://example.com/kept"); !errors.Is(err, ErrRecreated) {
		t.Errorf("Has on a handle of the filter made again: got %v; want ErrRecreated", err)
	}
}

// TestCountBound: a count that is no number, or more than the shard's bits
// can have counted, makes Add an error before it sets any bit, so the key
// stays absent and a retry still reports it new; Restore refuses such
// counts.
func TestCountBound(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, err := New(ctx, c, "n", 1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	limit := bloom.MaxCountPerBit * f.ShardBits()
	for _, bad := range []string{
		"9223372036854775807", // INCRBY would overflow
		"18446744073709551616",
		strconv.FormatUint(limit+1, 10),
		"12abc",
	} {
		c.Set(ctx, "{n:0}:n", bad, 0)
		key := "https://example.com/" + bad
		for what, err := range map[string]error{
			"Add":     second(f.Add(ctx, key)),
			"AddMany": second(f.AddMany(ctx, []string{key})),
			"Count":   second(f.Count(ctx)),
		} {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s with count %s: got %v; want ErrCorrupt", what, bad, err)
			}
		}
		if has, err := f.Has(ctx, key); has || err != nil {
			t.Errorf("count %s: a refused Add set bits: Has %v, %v", bad, has, err)
		}
		if _, err := f.Snapshot(ctx); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Snapshot with count %s: got %v; want ErrCorrupt", bad, err)
		}
		c.Set(ctx, "{n:0}:n", "5", 0)
		if isNew, err := f.Add(ctx, key); !isNew || err != nil {
			t.Errorf("Add once the count is sound: %v, %v; want new", isNew, err)
		}
	}

	// At the bound, the count is sound but takes no new key.
	c.Set(ctx, "{n:0}:n", limit, 0)
	if isNew, err := f.Add(ctx, "https://example.com/at-the-bound"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Add with the count at its bound: %v, %v; want ErrCorrupt", isNew, err)
	}
	if has, _ := f.Has(ctx, "https://example.com/at-the-bound"); has {
		t.Errorf("a refused Add set bits")
	}
	if n, err := f.Count(ctx); n != limit || err != nil {
		t.Errorf("Count at the bound: %d, %v", n, err)
	}

	// Restore refuses a record that counts more keys than its bits can have
	// counted, whether the decoder refuses it or not.
	m, k, _ := bloom.Optimal(1000, 0.01)
	for _, count := range []uint64{1 << 63, (bloom.MaxCountPerBit-1)*m + 1} {
		var rec bytes.Buffer
		info := bloom.Info{Bits: m, Hashes: k, Count: count, Capacity: 1000, FPRate: 0.01}
		if _, err := bloom.WriteClassic(&rec, info, bytes.NewReader(make([]byte, 8*((m+63)/64)))); err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(ctx, c, "big", rec.Bytes(), bloom.DefaultMaxBits); !errors.Is(err, bloom.ErrCorrupt) {
			t.Errorf("Restore of count %d: got %v; want bloom.ErrCorrupt", count, err)
		}
	}
	if n, _ := c.Exists(ctx, "big", "big:0", "{big:0}:n", "{big:0}:g").Result(); n != 0 {
		t.Errorf("a refused Restore wrote %d keys", n)
	}
}

// TestRestoreRecreate: Restore refuses a lost filter's name, saying so,
// unless its options ask to replace it.
func TestRestoreRecreate(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, _ := New(ctx, c, "p", 1000, 0.01)
	f.Add(ctx, "https://example.com/old")
	data := localSnapshot(t, 1, 1000, 0.01, []string{"https://example.com/new"})
	if _, err := Restore(ctx, c, "p", data, bloom.DefaultMaxBits); !errors.Is(err, ErrExists) {
		t.Errorf("Restore over a whole filter: got %v; want ErrExists", err)
	}
	if _, err := RestoreWithOptions(ctx, c, "p", data, bloom.DefaultMaxBits, RestoreOptions{Recreate: true}); !errors.Is(err, ErrExists) {
		t.Errorf("Restore with Recreate over a whole filter: got %v; want ErrExists", err)
	}
	c.Del(ctx, "p:0")
	if _, err := Restore(ctx, c, "p", data, bloom.DefaultMaxBits); !errors.Is(err, ErrLost) {
		t.Errorf("Restore over a lost filter: got %v; want ErrLost", err)
	}
	g, err := RestoreWithOptions(ctx, c, "p", data, bloom.DefaultMaxBits, RestoreOptions{Recreate: true})
	if err != nil {
		t.Fatalf("Restore with Recreate over a lost filter: %v", err)
	}
	if ok, err := g.Has(ctx, "https://example.com/new"); !ok || err != nil {
		t.Errorf("restored filter: Has %v, %v", ok, err)
	}
	if _, err := f.Has(ctx, "https://example.com/old"); !errors.Is(err, ErrRecreated) {
		t.Errorf("old handle after the restore: got %v; want ErrRecreated", err)
	}
}
