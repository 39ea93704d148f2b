package redisfilter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/redis/go-redis/v9"
)

// The concurrent test: 50 goroutines in 2 processes, each adding 1 000 URLs
// of 20 000, each URL by 2 or 3 goroutines of both processes, starting at
// the same moment. The second process is this test binary run again.
const (
	procGoroutines = 25
	perGoroutine   = 1000
	distinct       = 20000
	childAddr      = "REDISFILTER_CHILD_ADDR"
	childOut       = "REDISFILTER_CHILD_OUT"
	childStart     = "REDISFILTER_CHILD_START"
	sharedName     = "fleet"
	sharedCapacity = 200000
	sharedRate     = 1e-7
)

func fleetURLs() []string {
	keys := make([]string, distinct)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://host%d.example/articles/%d?page=%d", i%113, i, i%7)
	}
	return keys
}

// runFleet runs the goroutines of one process, g = proc, proc+2, …, 48 or
// 49, from start on, and returns the indexes of the URLs each heard new.
func runFleet(ctx context.Context, f *Filter, proc int, start time.Time) ([]int, error) {
	keys := fleetURLs()
	var mu sync.Mutex
	var heard []int
	var errs []error
	var wg sync.WaitGroup
	for g := proc; g < 2*procGoroutines; g += 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := make([]int, perGoroutine)
			for j := range idx {
				idx[j] = (g*400 + j) % distinct
			}
			var mine []int
			time.Sleep(time.Until(start))
			if g%4 < 2 {
				// One key a call.
				for _, i := range idx {
					isNew, err := f.Add(ctx, keys[i])
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					if isNew {
						mine = append(mine, i)
					}
				}
			} else {
				// Batches of 100.
				for b := 0; b < len(idx); b += 100 {
					batch := make([]string, 100)
					for j := range batch {
						batch[j] = keys[idx[b+j]]
					}
					res, err := f.AddMany(ctx, batch)
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					for j, isNew := range res {
						if isNew {
							mine = append(mine, idx[b+j])
						}
					}
				}
			}
			mu.Lock()
			heard = append(heard, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return heard, errors.Join(errs...)
}

func TestTwoProcesses(t *testing.T) {
	if addr := os.Getenv(childAddr); addr != "" {
		runChild(t, addr)
		return
	}
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	// A tiny rate, so that no URL finds its bits set by others (a false
	// positive) and each is new exactly once, in any order of the adds.
	f, err := NewWithConfig(ctx, c, sharedName, Config{Capacity: sharedCapacity, FPRate: sharedRate, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(500 * time.Millisecond)
	out := filepath.Join(t.TempDir(), "child.json")
	child := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$", "-test.count=1")
	child.Env = append(os.Environ(), childAddr+"="+srv.Addr(), childOut+"="+out,
		childStart+"="+strconv.FormatInt(start.UnixNano(), 10))
	var childLog bytes.Buffer
	child.Stdout, child.Stderr = &childLog, &childLog
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	heard, err := runFleet(ctx, f, 0, start)
	if werr := child.Wait(); werr != nil {
		t.Fatalf("child process: %v\n%s", werr, childLog.Bytes())
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var childHeard []int
	if err := json.Unmarshal(data, &childHeard); err != nil {
		t.Fatal(err)
	}
	if len(heard) == 0 || len(childHeard) == 0 {
		t.Fatalf("a process heard nothing new: %d here, %d in the child", len(heard), len(childHeard))
	}
	times := make([]int, distinct)
	for _, i := range append(heard, childHeard...) {
		times[i]++
	}
	for i, n := range times {
		if n != 1 {
			t.Errorf("URL %d was reported new %d times; want exactly once", i, n)
		}
	}
	keys := fleetURLs()
	has, err := f.HasMany(ctx, keys)
	if err != nil || !allTrue(has) {
		t.Fatalf("HasMany after the run: %v, all present %v", err, allTrue(has))
	}
	snap, err := f.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := localSnapshot(t, 3, sharedCapacity, sharedRate, keys); !bytes.Equal(snap, want) {
		t.Fatal("the snapshot differs from bloom filters given the same keys")
	}
	t.Logf("%d URLs new here, %d in the child process", len(heard), len(childHeard))
}

func runChild(t *testing.T, addr string) {
	ctx := testCtx(t)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	f, err := Open(ctx, c, sharedName)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := strconv.ParseInt(os.Getenv(childStart), 10, 64)
	heard, err := runFleet(ctx, f, 1, time.Unix(0, ns))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(heard)
	if err := os.WriteFile(os.Getenv(childOut), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCrashAOF kills Redis with SIGKILL while 8 goroutines add, restarts it
// on its append-only file, and finds every add that returned without error.
func TestCrashAOF(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx := testCtx(t)
	c := srv.Client(noRetries)
	f, err := New(ctx, c, "durable", 1_000_000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []string
	ackedNew := 0
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				key := fmt.Sprintf("https://g%d.example/%d", g, i)
				var isNew bool
				var err error
				if g%2 == 0 {
					isNew, err = f.Add(ctx, key)
				} else {
					var res []bool
					batch := []string{key, key + "#b"}
					if res, err = f.AddMany(ctx, batch); err == nil {
						isNew = res[0]
						mu.Lock()
						acked = append(acked, batch[1])
						mu.Unlock()
					}
				}
				if err != nil {
					if !strings.HasPrefix(err.Error(), "redisfilter: ") {
						t.Errorf("error after the crash: %v; want one starting with redisfilter", err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, key)
				if isNew {
					ackedNew++
				}
				mu.Unlock()
			}
		}()
	}
	// Mid-run: once 1 000 adds have returned (or after 10 s on a very slow
	// machine), while the goroutines keep adding.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 1000 {
			break
		}
	}
	srv.Kill()
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d adds before the crash", len(acked))
	}
	srv.Restart()
	f, err = Open(ctx, srv.Client(), "durable")
	if err != nil {
		t.Fatal(err)
	}
	has, err := f.HasMany(ctx, acked)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i, ok := range has {
		if !ok {
			lost++
			if lost < 5 {
				t.Errorf("%q: added without error before the crash, absent after it", acked[i])
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged adds lost", lost, len(acked))
	}
	if n, err := f.Count(ctx); err != nil || n < uint64(ackedNew) {
		t.Errorf("Count after the restart: %d, %v; want at least the %d acknowledged new keys", n, err, ackedNew)
	}
	t.Logf("%d acknowledged adds, all present after SIGKILL and restart", len(acked))
}

// TestOutage cuts the connections, then stops Redis: calls return errors
// wrapping the cause and never a wrong answer, and work again once Redis is
// back.
func TestOutage(t *testing.T) {
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	ctx := testCtx(t)
	c := srv.Client(noRetries)
	f, err := NewWithConfig(ctx, c, "outage", Config{Capacity: 10000, FPRate: 0.01, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys := urls("outage", 2000)
	if _, err := f.AddMany(ctx, keys); err != nil {
		t.Fatal(err)
	}
	// Answers are right or errors, never a "false" for a present key.
	check := func(when string, mustWork bool) (errs int) {
		t.Helper()
		for i, k := range keys[:200] {
			ok, err := f.Has(ctx, k)
			switch {
			case err != nil && mustWork:
				t.Fatalf("%s: Has(%q): %v", when, k, err)
			case err != nil:
				errs++
				if !strings.HasPrefix(err.Error(), "redisfilter: check") {
					t.Fatalf("%s: Has: %v; want an error saying what failed", when, err)
				}
			case !ok:
				t.Fatalf("%s: Has(%q) = false, nil for an added key", when, k)
			}
			if i%50 == 0 {
				res, err := f.HasMany(ctx, keys)
				if err == nil && !allTrue(res) {
					t.Fatalf("%s: HasMany answered false for an added key", when)
				}
			}
		}
		return errs
	}

	// Connections cut under the client.
	admin := srv.Client()
	if err := admin.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	check("connections cut", false)
	check("after the cut", true)

	// Redis down: every call fails with the cause, a refused connection.
	srv.Kill()
	calls := map[string]error{
		"Add":      second(f.Add(ctx, "new")),
		"Has":      second(f.Has(ctx, keys[0])),
		"AddMany":  second(f.AddMany(ctx, keys[:10])),
		"HasMany":  second(f.HasMany(ctx, keys[:10])),
		"Snapshot": second(f.Snapshot(ctx)),
		"Count":    second(f.Count(ctx)),
		"Open":     second(Open(ctx, c, "outage")),
		"New":      second(New(ctx, c, "other", 10, 0.1)),
	}
	for what, err := range calls {
		if !errors.Is(err, syscall.ECONNREFUSED) || !strings.HasPrefix(err.Error(), "redisfilter: ") {
			t.Errorf("%s with Redis down: got %v; want a redisfilter error wrapping ECONNREFUSED", what, err)
		}
	}
	// With go-redis's default retries too, after they give up.
	if _, err := f.Has(ctx, keys[0]); err == nil {
		t.Error("Has with Redis down: no error")
	}
	retrying := srv.Client()
	g, err := Open(ctx, retrying, "outage")
	if !errors.Is(err, syscall.ECONNREFUSED) || g != nil {
		t.Errorf("Open with retries and Redis down: got %v; want ECONNREFUSED", err)
	}
	// A cancelled context is an error too.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Has(cancelled, keys[0]); !errors.Is(err, context.Canceled) {
		t.Errorf("Has with a cancelled context: got %v; want context.Canceled", err)
	}

	// Back: the same handle works, the keys are there, and AddMany reloads
	// its script, which the restart dropped.
	srv.Restart()
	check("after the restart", true)
	res, err := f.AddMany(ctx, urls("after", 100))
	if err != nil || !allTrue(res) {
		t.Fatalf("AddMany after the restart: %v, all new %v", err, allTrue(res))
	}
	if isNew, err := f.Add(ctx, keys[0]); err != nil || isNew {
		t.Fatalf("Add of an old key after the restart: %v, %v; want false", isNew, err)
	}
}

// TestCluster runs a one-node Redis Cluster that owns every slot: Redis
// refuses a script whose keys lie in different slots (CROSSSLOT) even then,
// so this shows that each shard's bits and count share a slot, with and
// without a hash tag in the name.
func TestCluster(t *testing.T) {
	srv := redistest.StartCluster(t)
	ctx := testCtx(t)
	admin := srv.Client()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr()}})
	t.Cleanup(func() { c.Close() })
	var uc redis.UniversalClient = c
	keys := urls("cluster", 5000)
	for _, name := range []string{"crawl", "{crawl}"} {
		f, err := NewWithConfig(ctx, uc, name, Config{Capacity: 10000, FPRate: 0.01, Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.AddMany(ctx, keys[:4000]); err != nil {
			t.Fatalf("%s: AddMany: %v", name, err)
		}
		for _, k := range keys[4000:] {
			if _, err := f.Add(ctx, k); err != nil {
				t.Fatalf("%s: Add: %v", name, err)
			}
		}
		if has, err := f.HasMany(ctx, keys); err != nil || !allTrue(has) {
			t.Fatalf("%s: HasMany: %v", name, err)
		}
		snap, err := f.Snapshot(ctx)
		if err != nil || !bytes.Equal(snap, localSnapshot(t, 4, 10000, 0.01, keys)) {
			t.Fatalf("%s: Snapshot: %v, or differs from bloom filters given the same keys", name, err)
		}
		if _, err := Restore(ctx, uc, name+"-copy", snap, 1<<30); err != nil {
			t.Fatalf("%s: Restore: %v", name, err)
		}
		if err := f.Delete(ctx); err != nil {
			t.Fatalf("%s: Delete: %v", name, err)
		}
	}
	got, _ := admin.Keys(ctx, "*").Result()
	want := []string{"crawl-copy", "crawl-copy:0", "{crawl-copy:0}:n", "{crawl}-copy", "{crawl}-copy:0", "{crawl}-copy:0:n"}
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("key %q missing; keys: %q", k, got)
		}
	}
}
