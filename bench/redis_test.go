package bench

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/redis/go-redis/v9"
)

var (
	redisKeys   = flag.Int("redis.keys", 0, "TestRedis: URLs a pass adds (0 skips it)")
	redisNaive  = flag.Int("redis.naive", 100_000, "TestRedis: URLs the naive per-bit SETBIT pattern adds (it takes k round trips a key)")
	redisPasses = flag.Int("redis.passes", 3, "TestRedis: interleaved passes")
)

// A redisMethod is one way to keep a crawler's seen-set in Redis. run adds
// keys (reporting how many were new) to an empty database.
type redisMethod struct {
	name  string
	naive bool // bounded by -redis.naive
	run   func(ctx context.Context, c *redis.Client, keys []string) (int, error)
}

var redisMethods = []redisMethod{
	{"edgebloom AddMany (pipelined)", false, func(ctx context.Context, c *redis.Client, keys []string) (int, error) {
		f, err := redisfilter.New(ctx, c, "crawl", uint64(*redisKeys), 0.01)
		if err != nil {
			return 0, err
		}
		added := 0
		for i := 0; i < len(keys); i += 10000 {
			res, err := f.AddMany(ctx, keys[i:min(len(keys), i+10000)])
			if err != nil {
				return 0, err
			}
			added += countTrue(res)
		}
		return added, nil
	}},
	{"edgebloom Add (a round trip a key)", true, func(ctx context.Context, c *redis.Client, keys []string) (int, error) {
		f, err := redisfilter.New(ctx, c, "crawl", uint64(*redisKeys), 0.01)
		if err != nil {
			return 0, err
		}
		added := 0
		for _, k := range keys {
			isNew, err := f.Add(ctx, k)
			if err != nil {
				return 0, err
			}
			if isNew {
				added++
			}
		}
		return added, nil
	}},
	{"naive SETBIT (a round trip a bit)", true, func(ctx context.Context, c *redis.Client, keys []string) (int, error) {
		// The pattern of Bloom filters on Redis bitmaps in crawler
		// frameworks: k SETBITs a key, each its own round trip, the key
		// new when one returned 0. Same m, k and bits as edgebloom's.
		m, k, _ := bloom.Optimal(uint64(*redisKeys), 0.01)
		added := 0
		var pos []uint64
		for _, key := range keys {
			pos = bloom.AppendLocations(pos[:0], []byte(key), m, k, 0)
			isNew := false
			for _, p := range pos {
				old, err := c.SetBit(ctx, "bits", int64(p^7), 1).Result()
				if err != nil {
					return 0, err
				}
				isNew = isNew || old == 0
			}
			if isNew {
				added++
			}
		}
		return added, nil
	}},
	{"SADD of the URLs (pipelined)", false, func(ctx context.Context, c *redis.Client, keys []string) (int, error) {
		added := 0
		for i := 0; i < len(keys); i += 1000 {
			cmds, err := c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
				for _, k := range keys[i:min(len(keys), i+1000)] {
					pipe.SAdd(ctx, "seen", k)
				}
				return nil
			})
			if err != nil {
				return 0, err
			}
			for _, cmd := range cmds {
				added += int(cmd.(*redis.IntCmd).Val())
			}
		}
		return added, nil
	}},
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// memory returns INFO memory's used_memory and used_memory_dataset (the
// former less Redis's overhead: client buffers, replication, the script
// cache, ...).
func memory(t *testing.T, ctx context.Context, c *redis.Client) (used, dataset int64) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) int64 {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no %s in INFO memory", name)
		return 0
	}
	return field("used_memory"), field("used_memory_dataset")
}

// TestRedis times ways to keep a seen-set of crawler URLs in one local
// redis-server (started here, without persistence): keys a second, and the
// memory Redis uses for them, as MEMORY USAGE of every key (SAMPLES 0) and
// as the growth of INFO memory's used_memory and used_memory_dataset from
// the emptied database (these also count client buffers and allocator
// rounding, so they move by some 100 KiB from run to run). The methods run one after the other within a pass, in
// an order that rotates from pass to pass; it prints the medians. Run it
// with
//
//	go test -run '^TestRedis$' -redis.keys 1000000 -v
func TestRedis(t *testing.T) {
	if *redisKeys == 0 {
		t.Skip("-redis.keys 0")
	}
	srv := redistest.Start(t)
	ctx := context.Background()
	c := srv.Client()
	present, _, _, _ := keySets(urlKinds[0], *redisKeys)
	type sample struct{ rate, used, data, keys []float64 }
	results := make([]sample, len(redisMethods))
	for pass := range *redisPasses {
		for j := range redisMethods {
			i := (j + pass) % len(redisMethods)
			m := redisMethods[i]
			keys := present.keys
			if m.naive {
				keys = keys[:min(len(keys), *redisNaive)]
			}
			if err := c.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			used0, data0 := memory(t, ctx, c)
			start := time.Now()
			added, err := m.run(ctx, c, keys)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			used, data := memory(t, ctx, c)
			var keysMem int64
			all, err := c.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range all {
				n, err := c.MemoryUsage(ctx, key, 0).Result() // SAMPLES 0: every element
				if err != nil {
					t.Fatal(err)
				}
				keysMem += n
			}
			rate := float64(len(keys)) / elapsed.Seconds()
			t.Logf("pass %d: %-36s %8d keys %8d new %10.0f keys/s, used_memory +%d, used_memory_dataset +%d, MEMORY USAGE %d bytes",
				pass, m.name, len(keys), added, rate, used-used0, data-data0, keysMem)
			results[i].rate = append(results[i].rate, rate)
			results[i].used = append(results[i].used, float64(used-used0))
			results[i].data = append(results[i].data, float64(data-data0))
			results[i].keys = append(results[i].keys, float64(keysMem))
		}
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	m, k, _ := bloom.Optimal(uint64(*redisKeys), 0.01)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d crawler URLs, p = 1%% (m = %d bits, k = %d), median of %d passes:\n\n", *redisKeys, m, k, *redisPasses)
	// Bytes a key are of the full set: a bitmap has its full size from the
	// first keys on, and the naive row stops early.
	fmt.Fprintf(&b, "| method | keys | keys/s | MEMORY USAGE of its keys | bytes a key of %d | INFO used_memory Δ | used_memory_dataset Δ |\n", *redisKeys)
	fmt.Fprintf(&b, "| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range results {
		n := *redisKeys
		if redisMethods[i].naive {
			n = min(n, *redisNaive)
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.2f MiB | %.1f | %.2f MiB | %.2f MiB |\n", redisMethods[i].name, n, median(r.rate),
			median(r.keys)/(1<<20), median(r.keys)/float64(*redisKeys), median(r.used)/(1<<20), median(r.data)/(1<<20))
	}
	t.Log(b.String())
}
