package redisfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/redis/go-redis/v9"
)

func urls(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://%s%d.example/path/%d?q=%d", prefix, i%97, i, i*31)
	}
	return keys
}

// localSnapshot is what package bloom writes for the keys: one filter, or a
// container of shards sized as the Worker sizes them.
func localSnapshot(t testing.TB, shards int, capacity uint64, fpRate float64, keys []string) []byte {
	t.Helper()
	per := (capacity-1)/uint64(shards) + 1
	filters := make([]*bloom.Filter, shards)
	lengths := make([]uint64, shards)
	for i := range filters {
		f, err := bloom.New(per, fpRate)
		if err != nil {
			t.Fatal(err)
		}
		filters[i], lengths[i] = f, f.EncodedSize()
	}
	router := snapshot.Router(shards)
	for _, k := range keys {
		filters[snapshot.Route(router, k)].AddString(k)
	}
	var out []byte
	if shards > 1 {
		out = snapshot.AppendHeader(nil, lengths)
	}
	for _, f := range filters {
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

func TestAddHas(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, err := New(ctx, c, "crawl", 10000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	local, _ := bloom.New(10000, 0.01)
	keys := urls("a", 3000)
	for i, k := range keys[:1000] {
		got, err := f.Add(ctx, k)
		if want := local.AddString(k); err != nil || got != want {
			t.Fatalf("Add(%q) #%d: got %v, %v; want %v", k, i, got, err, want)
		}
		if got, err := f.Add(ctx, k); err != nil || got {
			t.Fatalf("Add(%q) again: got %v, %v; want false", k, got, err)
		}
		if got, err := f.Has(ctx, k); err != nil || !got {
			t.Fatalf("Has(%q): got %v, %v; want true", k, got, err)
		}
	}
	want := make([]bool, len(keys))
	for i, k := range keys {
		want[i] = local.AddString(k)
	}
	got, err := f.AddMany(ctx, keys)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("AddMany: %v; answers differ from bloom.Filter: %v", err, !slices.Equal(got, want))
	}
	probes := append(urls("a", 3000), urls("absent", 3000)...)
	has, err := f.HasMany(ctx, probes)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range probes {
		if has[i] != local.HasString(k) {
			t.Fatalf("HasMany: %q: got %v; want %v as bloom.Filter", k, has[i], local.HasString(k))
		}
		if one, err := f.Has(ctx, k); err != nil || one != has[i] {
			t.Fatalf("Has(%q): got %v, %v; HasMany said %v", k, one, err, has[i])
		}
	}
	if n, err := f.Count(ctx); err != nil || n != local.Count() {
		t.Errorf("Count: got %d, %v; want %d", n, err, local.Count())
	}
	if n, err := f.SetBits(ctx); err != nil || n != local.SetBits() {
		t.Errorf("SetBits: got %d, %v; want %d", n, err, local.SetBits())
	}
	// GET of the shard is the payload of the portable format.
	raw, _ := c.Get(ctx, "crawl:0").Bytes()
	enc, _ := local.MarshalBinary()
	payload := enc[bloom.HeaderSize : len(enc)-8]
	if !bytes.Equal(raw, payload) {
		t.Errorf("GET crawl:0: %d bytes, not the filter's payload (%d bytes)", len(raw), len(payload))
	}
	snap, err := f.Snapshot(ctx)
	if err != nil || !bytes.Equal(snap, enc) {
		t.Fatalf("Snapshot: %v; equal to MarshalBinary: %v", err, bytes.Equal(snap, enc))
	}
	if uint64(len(snap)) != f.SnapshotSize() {
		t.Errorf("SnapshotSize: %d; Snapshot wrote %d", f.SnapshotSize(), len(snap))
	}
}

// TestBitOrder pins the mapping of a bit of the format to its Redis offset:
// bit i of the payload is Redis offset i^7, checked with GETBIT.
func TestBitOrder(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, err := New(ctx, c, "order", 50, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	local, _ := bloom.New(50, 0.1)
	key := "https://example.com/"
	f.Add(ctx, key)
	local.AddString(key)
	for _, i := range local.Locations([]byte(key)) {
		if b, _ := c.GetBit(ctx, "order:0", int64(i^7)).Result(); b != 1 {
			t.Errorf("bit %d: GETBIT order:0 %d = %d; want 1", i, i^7, b)
		}
		raw, _ := c.Get(ctx, "order:0").Bytes()
		if raw[i/8]>>(i%8)&1 != 1 {
			t.Errorf("bit %d: byte %d of GET is %08b; want bit %d set", i, i/8, raw[i/8], i%8)
		}
	}
}

func TestSnapshotSharded(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	for _, shards := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			name := fmt.Sprint("s", shards)
			f, err := NewWithConfig(ctx, c, name, Config{Capacity: 20000, FPRate: 0.001, Shards: shards})
			if err != nil {
				t.Fatal(err)
			}
			if f.Shards() != shards {
				t.Fatalf("Shards: got %d; want %d", f.Shards(), shards)
			}
			keys := urls(name, 15000)
			if _, err := f.AddMany(ctx, keys[:10000]); err != nil {
				t.Fatal(err)
			}
			for _, k := range keys[10000:] {
				if _, err := f.Add(ctx, k); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := f.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := localSnapshot(t, shards, 20000, 0.001, keys); !bytes.Equal(snap, want) {
				t.Fatalf("Snapshot: %d bytes, differs from the %d bytes of bloom filters given the same keys", len(snap), len(want))
			}
			set, err := snapshot.Load(snap, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if !set.HasString(k) {
					t.Fatalf("snapshot.Load(Snapshot()).HasString(%q): false", k)
				}
			}
			// Restore under another name gives the same filter back.
			g, err := Restore(ctx, c, name+"-copy", snap, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if again, err := g.Snapshot(ctx); err != nil || !bytes.Equal(again, snap) {
				t.Fatalf("Snapshot of the restored filter: %v; equal %v", err, bytes.Equal(again, snap))
			}
			if has, err := g.HasMany(ctx, keys); err != nil || !allTrue(has) {
				t.Fatalf("HasMany on the restored filter: %v, all true %v", err, allTrue(has))
			}
			// Restoring again refuses the taken name and changes nothing.
			if _, err := Restore(ctx, c, name+"-copy", snap, 1<<30); !errors.Is(err, ErrExists) {
				t.Fatalf("Restore onto a taken name: got %v; want ErrExists", err)
			}
			if again, _ := g.Snapshot(ctx); !bytes.Equal(again, snap) {
				t.Fatal("a refused Restore changed the filter")
			}
		})
	}
}

func allTrue(b []bool) bool {
	for _, v := range b {
		if !v {
			return false
		}
	}
	return true
}

// TestSeedAndExplicitSize restores a filter of explicit size and seed made by
// package bloom, and adds to it in Redis as bloom does.
func TestSeedAndExplicitSize(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	local, _ := bloom.NewWithSeed(100003, 5, 77)
	keys := urls("seed", 4000)
	for _, k := range keys[:2000] {
		local.AddString(k)
	}
	enc, _ := local.MarshalBinary()
	f, err := Restore(ctx, c, "seeded", enc, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if f.Seed() != 77 || f.NumBits() != 100003 || f.NumHashes() != 5 || f.Capacity() != 0 || f.TargetFPR() != 0 {
		t.Fatalf("restored parameters: seed %d, m %d, k %d, capacity %d, rate %g", f.Seed(), f.NumBits(), f.NumHashes(), f.Capacity(), f.TargetFPR())
	}
	g, err := Open(ctx, c, "seeded")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[2000:] {
		got, err := g.Add(ctx, k)
		if want := local.AddString(k); err != nil || got != want {
			t.Fatalf("Add(%q): got %v, %v; want %v", k, got, err, want)
		}
	}
	enc, _ = local.MarshalBinary()
	if snap, err := g.Snapshot(ctx); err != nil || !bytes.Equal(snap, enc) {
		t.Fatalf("Snapshot: %v; equal %v", err, bytes.Equal(snap, enc))
	}
	// A seeded filter made in Redis sets the bits of a seeded bloom.Filter.
	h, err := NewWithConfig(ctx, c, "seeded-new", Config{Capacity: 1000, FPRate: 0.01, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	h.AddMany(ctx, keys[:500])
	snap, _ := h.Snapshot(ctx)
	back, err := bloom.Decode(bytes.NewReader(snap), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := bloom.NewWithSeed(h.ShardBits(), h.NumHashes(), 5)
	for _, k := range keys[:500] {
		want.AddString(k)
	}
	if !back.Equal(want) || back.Seed() != 5 || back.Count() != 500 {
		t.Fatalf("seeded snapshot: equal %v, seed %d, count %d", back.Equal(want), back.Seed(), back.Count())
	}
}

func TestSized(t *testing.T) {
	for _, tt := range []struct {
		capacity uint64
		p        float64
		shards   int
	}{
		{1000, 0.01, 1},
		{400_000_000, 0.01, 1}, // 3.83e9 bits
		{500_000_000, 0.01, 2}, // 4.79e9 bits
		{10_000_000_000, 0.01, 23},
		{1_000_000_000, 1e-9, 11},
	} {
		p, err := sized(Config{Capacity: tt.capacity, FPRate: tt.p})
		if err != nil {
			t.Fatalf("sized(%d, %g): %v", tt.capacity, tt.p, err)
		}
		if p.shards != tt.shards || p.m > MaxShardBits {
			t.Errorf("sized(%d, %g): %d shards of %d bits; want %d shards of at most 2^32", tt.capacity, tt.p, p.shards, p.m, tt.shards)
		}
		if fewer, err := sized(Config{Capacity: tt.capacity, FPRate: tt.p, Shards: p.shards - 1}); p.shards > 1 && err == nil {
			t.Errorf("sized(%d, %g) with %d shards: %d bits a shard, no error", tt.capacity, tt.p, p.shards-1, fewer.m)
		}
	}
}

func TestBadInput(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	for _, tt := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"crawl", Config{Capacity: 0, FPRate: 0.01}, "capacity"},
		{"crawl", Config{Capacity: 10, FPRate: 0}, "fpRate"},
		{"crawl", Config{Capacity: 10, FPRate: 1}, "fpRate"},
		{"crawl", Config{Capacity: 10, FPRate: -0.5}, "fpRate"},
		{"crawl", Config{Capacity: 10, FPRate: math.NaN()}, "fpRate"},
		{"crawl", Config{Capacity: 10, FPRate: 1e-30}, "hash functions"},
		{"crawl", Config{Capacity: 10, FPRate: 0.01, Shards: -1}, "Shards"},
		{"crawl", Config{Capacity: 10, FPRate: 0.01, Shards: MaxShards + 1}, "Shards"},
		{"crawl", Config{Capacity: 1e12, FPRate: 0.01, Shards: 2}, "Shards"},
		{"crawl", Config{Capacity: 1 << 62, FPRate: 0.01}, "Capacity"},
		{"", Config{Capacity: 10, FPRate: 0.01}, "name"},
		{strings.Repeat("n", MaxNameLen+1), Config{Capacity: 10, FPRate: 0.01}, "name"},
		{"a}b", Config{Capacity: 10, FPRate: 0.01}, "name"},
		{"{}x}", Config{Capacity: 10, FPRate: 0.01}, "name"},
	} {
		_, err := NewWithConfig(ctx, c, tt.name, tt.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "redisfilter: invalid") && !strings.HasPrefix(err.Error(), "redisfilter: bloom: invalid") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewWithConfig(%.20q, %+v): got %v; want an error about %s", tt.name, tt.cfg, err, tt.want)
		}
	}
	if _, err := Open(ctx, c, ""); err == nil {
		t.Error(`Open(""): no error`)
	}
	if _, err := Open(ctx, c, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of a missing name: got %v; want ErrNotFound", err)
	}

	// Snapshots that are not filters, or too large for the bound.
	good, _ := bloom.New(5000, 0.01)
	good.AddString("x")
	enc, _ := good.MarshalBinary()
	counting, _ := bloom.NewCounting(100, 0.01)
	cenc, _ := counting.MarshalBinary()
	bad := bytes.Clone(enc)
	bad[100] ^= 1
	container := localSnapshot(t, 3, 3000, 0.01, []string{"a", "b"})
	badRouter := bytes.Clone(container)
	badRouter[24+3*8+8] ^= 1 // the router's seed
	for _, tt := range []struct {
		name string
		data []byte
		max  uint64
		want error
	}{
		{"garbage", bytes.Repeat([]byte("hello, world "), 10), 1 << 20, bloom.ErrNotFilter},
		{"empty", nil, 1 << 20, io.ErrUnexpectedEOF},
		{"truncated", enc[:len(enc)-1], 1 << 20, io.ErrUnexpectedEOF},
		{"checksum", bad, 1 << 20, bloom.ErrChecksum},
		{"over the bound", enc, 1000, bloom.ErrTooLarge},
		{"counting", cenc, 1 << 20, bloom.ErrKind},
		{"trailing bytes", append(bytes.Clone(enc), 0), 1 << 20, nil},
		{"container over the bound", container, 100, bloom.ErrTooLarge},
		{"container with a bad router", badRouter, 1 << 20, bloom.ErrChecksum},
		{"container cut", container[:len(container)-3], 1 << 20, snapshot.ErrFormat},
	} {
		_, err := Restore(ctx, c, "restored", tt.data, tt.max)
		if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("Restore(%s): got %v; want %v", tt.name, err, tt.want)
		}
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		keys, _ := c.Keys(ctx, "*").Result()
		t.Errorf("refused calls left %d keys in Redis: %q", n, keys)
	}
}

// TestWrongThings: a name or key that holds something else, or a filter
// with other parameters, gives a clear error and nothing is overwritten.
func TestWrongThings(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	c.RPush(ctx, "list", "a", "b")
	c.HSet(ctx, "foreign", "owner", "someone else")
	if _, err := New(ctx, c, "list", 1000, 0.01); !errors.Is(err, ErrNotFilter) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Errorf("New over a list: got %v; want ErrNotFilter naming WRONGTYPE", err)
	}
	if _, err := Open(ctx, c, "list"); !errors.Is(err, ErrNotFilter) {
		t.Errorf("Open of a list: got %v; want ErrNotFilter", err)
	}
	if got, _ := c.LRange(ctx, "list", 0, -1).Result(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("the list changed: %q", got)
	}
	for _, call := range []func() error{
		func() error { _, err := New(ctx, c, "foreign", 1000, 0.01); return err },
		func() error { _, err := Open(ctx, c, "foreign"); return err },
	} {
		if err := call(); !errors.Is(err, ErrNotFilter) {
			t.Errorf("New/Open of a foreign hash: got %v; want ErrNotFilter", err)
		}
	}
	if got, _ := c.HGetAll(ctx, "foreign").Result(); len(got) != 1 || got["owner"] != "someone else" {
		t.Errorf("the foreign hash changed: %v", got)
	}

	// Another filter's parameters.
	f, err := New(ctx, c, "crawl", 1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	f.Add(ctx, "https://example.com/")
	before, _ := c.HGetAll(ctx, "crawl").Result()
	for _, cfg := range []Config{
		{Capacity: 2000, FPRate: 0.01},
		{Capacity: 1000, FPRate: 0.001},
		{Capacity: 1000, FPRate: 0.01, Shards: 2},
		{Capacity: 1000, FPRate: 0.01, Seed: 1},
	} {
		if _, err := NewWithConfig(ctx, c, "crawl", cfg); !errors.Is(err, ErrMismatch) {
			t.Errorf("NewWithConfig(%+v) over another filter: got %v; want ErrMismatch", cfg, err)
		}
	}
	if g, err := New(ctx, c, "crawl", 1000, 0.01); err != nil || g.NumBits() != f.NumBits() {
		t.Errorf("New with the same parameters: %v", err)
	}
	after, _ := c.HGetAll(ctx, "crawl").Result()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("parameters changed: %v, then %v", before, after)
	}
	if ok, _ := f.Has(ctx, "https://example.com/"); !ok {
		t.Error("the filter lost its key")
	}

	// A shard key that holds data while the filter does not exist.
	c.Set(ctx, "taken:0", "hello", 0)
	if _, err := New(ctx, c, "taken", 1000, 0.01); !errors.Is(err, ErrExists) {
		t.Errorf("New over a used shard key: got %v; want ErrExists", err)
	}
	if n, _ := c.Exists(ctx, "taken").Result(); n != 0 {
		t.Error("New over a used shard key made the filter")
	}
	if v, _ := c.Get(ctx, "taken:0").Result(); v != "hello" {
		t.Errorf("taken:0 changed to %q", v)
	}

	// A shard replaced by another type, or grown too long, or a bad count.
	g, _ := New(ctx, c, "g", 1000, 0.01)
	c.Del(ctx, "g:0")
	c.RPush(ctx, "g:0", "x")
	for what, err := range map[string]error{
		"Add":      second(g.Add(ctx, "k")),
		"Has":      second(g.Has(ctx, "k")),
		"AddMany":  second(g.AddMany(ctx, []string{"k"})),
		"HasMany":  second(g.HasMany(ctx, []string{"k"})),
		"Snapshot": second(g.Snapshot(ctx)),
	} {
		if !errors.Is(err, ErrNotFilter) {
			t.Errorf("%s on a shard that is a list: got %v; want ErrNotFilter", what, err)
		}
	}
	if n, _ := c.LLen(ctx, "g:0").Result(); n != 1 {
		t.Errorf("the list at g:0 changed: %d items", n)
	}
	h, _ := New(ctx, c, "h", 1000, 0.01)
	c.SetRange(ctx, "h:0", int64(h.payloadLen()), "x")
	for what, err := range map[string]error{
		"Add":      second(h.Add(ctx, "k")),
		"Has":      second(h.Has(ctx, "k")),
		"Snapshot": second(h.Snapshot(ctx)),
		"Open":     second(Open(ctx, c, "h")),
	} {
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bytes, want") {
			t.Errorf("%s with an overlong shard: got %v; want ErrCorrupt naming the length", what, err)
		}
	}
	i, _ := New(ctx, c, "i", 1000, 0.01)
	c.Set(ctx, "{i:0}:n", "many", 0)
	if _, err := i.Count(ctx); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Count with a bad count: got %v; want ErrCorrupt", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestMissingShard: a shard deleted (or evicted, or lost) gives ErrLost, never
// "absent" for the keys it held, and is not silently made again.
func TestMissingShard(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, err := NewWithConfig(ctx, c, "m", Config{Capacity: 1000, FPRate: 0.01, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys := urls("m", 200)
	f.AddMany(ctx, keys)
	c.Del(ctx, "m:1")
	var on1 []string
	for _, k := range keys {
		if f.shard(k) == 1 {
			on1 = append(on1, k)
		}
	}
	for what, err := range map[string]error{
		"Add":      second(f.Add(ctx, on1[0])),
		"Has":      second(f.Has(ctx, on1[0])),
		"AddMany":  second(f.AddMany(ctx, keys)),
		"HasMany":  second(f.HasMany(ctx, keys)),
		"Snapshot": second(f.Snapshot(ctx)),
		"Open":     second(Open(ctx, c, "m")),
		"New":      second(NewWithConfig(ctx, c, "m", Config{Capacity: 1000, FPRate: 0.01, Shards: 2})),
	} {
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "missing") {
			t.Errorf("%s with shard 1 deleted: got %v; want ErrLost saying it is missing", what, err)
		}
	}
	if n, _ := c.Exists(ctx, "m:1").Result(); n != 0 {
		t.Error("a call made the deleted shard again")
	}
	// After Delete, a handle that still holds the filter gets errors too.
	f.Delete(ctx)
	if _, err := f.Has(ctx, keys[0]); !errors.Is(err, ErrLost) {
		t.Errorf("Has after Delete: got %v; want ErrLost", err)
	}
}

// TestConcurrentNew: processes of a fleet that start at once all call New
// with the same arguments; one makes the filter, the others join it.
func TestConcurrentNew(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := NewWithConfig(ctx, c, "fleet", Config{Capacity: 100000, FPRate: 0.01, Shards: 4})
			if err == nil {
				_, err = f.Add(ctx, "https://example.com/")
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestDelete(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	f, _ := NewWithConfig(ctx, c, "d", Config{Capacity: 1000, FPRate: 0.01, Shards: 3})
	f.AddMany(ctx, urls("d", 100))
	if n, _ := c.DBSize(ctx).Result(); n != 10 {
		keys, _ := c.Keys(ctx, "*").Result()
		t.Fatalf("keys: %q; want the parameters and 3 shards with counts and generations", keys)
	}
	if err := f.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Errorf("Delete left %d keys", n)
	}
	if _, err := Open(ctx, c, "d"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Delete: got %v; want ErrNotFound", err)
	}
}

func TestRequirePass(t *testing.T) {
	srv := redistest.Start(t, "--requirepass", "s3cret")
	ctx := testCtx(t)
	anon := srv.Client()
	if _, err := New(ctx, anon, "crawl", 1000, 0.01); err == nil || !strings.Contains(err.Error(), "NOAUTH") || !strings.HasPrefix(err.Error(), "redisfilter: ") {
		t.Errorf("New without a password: got %v; want a redisfilter error naming NOAUTH", err)
	}
	if _, err := Open(ctx, anon, "crawl"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("Open without a password: got %v; want NOAUTH", err)
	}
	wrong := srv.Client(func(o *redis.Options) { o.Password = "guess" })
	if _, err := New(ctx, wrong, "crawl", 1000, 0.01); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("New with a wrong password: got %v; want WRONGPASS", err)
	}
	authed := srv.Client(func(o *redis.Options) { o.Password = "s3cret" })
	if n, _ := authed.DBSize(ctx).Result(); n != 0 {
		t.Errorf("refused clients left %d keys", n)
	}
	f, err := New(ctx, authed, "crawl", 1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if isNew, err := f.Add(ctx, "https://example.com/"); err != nil || !isNew {
		t.Errorf("Add with the password: %v, %v", isNew, err)
	}
}
