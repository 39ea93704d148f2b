package bloomstorage_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// pausedThreads is the number of requests each collector of
// TestRedisPaused makes at a time.
const pausedThreads = 8

// pausedCrawl is the documented crawl as TestRedisPaused runs it in both
// collectors: links go to the storage's frontier, Run makes it
// pausedThreads requests at a time and fetches again what failed
// (testRetry); failed fetches are what the test is about, so OnError
// only counts them. It returns the responses the collector saw.
func pausedCrawl(store *bloomstorage.Storage, root string) (int, error) {
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	if err := c.SetStorage(store); err != nil {
		return 0, err
	}
	if err := store.SetRetry(testRetry); err != nil {
		return 0, err
	}
	var fetched atomic.Int64
	unexpected := follow(c, store)
	c.OnResponse(func(r *colly.Response) { fetched.Add(1) })
	if err := store.AddURL(root); err != nil && !errors.Is(err, bloomstorage.ErrVisited) {
		return 0, err
	}
	if err := store.Run(c, pausedThreads); err != nil {
		return 0, err
	}
	return int(fetched.Load()), unexpected()
}

// pausedChild is TestRedisPaused's child: the crawl, to its end.
func pausedChild(u string) {
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("BLOOMSTORAGE_CHILD_REDIS")})
	store := must(bloomstorage.NewRedis(context.Background(), client, os.Getenv("BLOOMSTORAGE_CHILD_NAME"), capacity, fpRate))
	n, err := pausedCrawl(store, u)
	if err == nil {
		err = store.Close()
	}
	fmt.Printf("the paused crawl ended: %d pages, %v\n", n, err)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// TestRedisPaused runs two collectors on one Redis frontier, one of them
// stopped (SIGSTOP: a GC pause, a laptop lid, a VM migration) for longer
// than RedisLease while it makes pausedThreads requests, whose fetches the
// site holds: the other takes those requests over once the lease has run
// out, fetches them and finishes the crawl. When the first one carries on
// (SIGCONT), its fetches time out; their outcome is no longer its to
// record, and it drops each with a log line. Every page is served whole
// once, none fetched again after that, and the page that always fails is
// recorded as given up on once.
//
// Every request the paused collector had in flight was held by the site,
// so no page is fetched again after a success, not even one in flight at
// the pause: a collector paused while a response was on its way would
// have that page fetched again by the other, the most a pause may cost.
func TestRedisPaused(t *testing.T) {
	srv := redistest.Start(t)
	name := "paused-" + fmt.Sprint(time.Now().UnixNano())
	const down = small / 2 // always 503 but to the paused collector, the first it holds
	var holding atomic.Bool
	var held sync.Map // page -> true, the paused collector's requests held
	var nHeld atomic.Int32
	s := newFailingSite(t, small, nil, func(w http.ResponseWriter, r *http.Request, i, fetch int) bool {
		if i == down && fetch == 1 {
			holding.Store(true)
		}
		if holding.Load() {
			held.Store(i, true)
			nHeld.Add(1)
			<-r.Context().Done() // the collector gives up at its timeout
			return true
		}
		if i == down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return true
		}
		return false
	})

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "BLOOMSTORAGE_CHILD_URL="+s.page(0), "BLOOMSTORAGE_CHILD_PAUSED=1",
		"BLOOMSTORAGE_CHILD_REDIS="+srv.Addr(), "BLOOMSTORAGE_CHILD_NAME="+name)
	out := &lockedBuffer{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() {
		child.Process.Signal(syscall.SIGCONT)
		child.Process.Kill()
	})
	// All its requests held: it has pausedThreads in flight, none with
	// a response.
	waitFor(t, 2*time.Minute, exited, out, func() bool { return nHeld.Load() == pausedThreads },
		"the child to have %d requests held (%d so far, %d pages served)", pausedThreads, &nHeld, &s.total)
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, exited, out, func() bool { return processState(child.Process.Pid) == 'T' }, "the child to stop")
	holding.Store(false)
	stopped := time.Now()

	// The other collector, beside it: it crawls what is left, then, once
	// the paused one's lease has run out, takes its requests over.
	client := srv.Client()
	defer client.Close()
	store := must(bloomstorage.NewRedis(context.Background(), client, name, capacity, fpRate))
	defer store.Close()
	second, err := pausedCrawl(store, s.page(0))
	if err != nil {
		t.Fatal(err)
	}
	// Stopped past its lease whatever the other took: its last renewal
	// may have come a third of RedisLease before the stop.
	time.Sleep(bloomstorage.RedisLease - time.Since(stopped))
	pause := time.Since(stopped)
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the child crawl: %v\n%s", err, out)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the child crawl did not end in 2 minutes after SIGCONT:\n%s", out)
	}
	t.Logf("the child was stopped %v with %d requests held; the other collector fetched %d pages; the child said:\n%s",
		pause.Round(time.Millisecond), nHeld.Load(), second, out)

	s.mu.Lock()
	var twice, again, never []int
	for i := range s.fetches {
		switch {
		case i == down:
		case s.served[i] == 0:
			never = append(never, i)
		case s.served[i] > 1:
			twice = append(twice, i)
		}
		if s.again[i] > 0 {
			again = append(again, i)
		}
	}
	s.mu.Unlock()
	if len(never) > 0 || len(twice) > 0 || len(again) > 0 {
		t.Errorf("pages never served: %v; served more than once: %v; fetched again after they were served: %v; want none", never, twice, again)
	}
	var heldPages []int
	held.Range(func(k, _ any) bool { heldPages = append(heldPages, k.(int)); return true })
	if len(heldPages) != pausedThreads {
		t.Errorf("the site held pages %v of the child; want %d", heldPages, pausedThreads)
	}
	f := must(store.Failures())
	if len(f) != 1 || f[0].URL != s.page(down) || f[0].Status != http.StatusServiceUnavailable || f[0].Attempts != testRetry.Attempts {
		t.Errorf("Failures: %+v; want page %d once, %d fetches, 503", f, down, testRetry.Attempts)
	}
	if n := strings.Count(out.String(), "outcome dropped"); n != pausedThreads {
		t.Errorf("the child logged %d dropped outcomes; want one a request it had in flight (%d)", n, pausedThreads)
	}
	if !strings.Contains(out.String(), s.page(down)+": ") {
		t.Errorf("the child's log does not name page %d, held at the pause", down)
	}
}

// waitFor waits until cond holds, failing t after d or when the child
// exited first; what and args say what it waits for (an *atomic.Int32 or
// *atomic.Int64 among them is read at the time).
func waitFor(t *testing.T, d time.Duration, exited chan error, out fmt.Stringer, cond func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case err := <-exited:
			t.Fatalf("the child ended (%v) before the test saw "+what+":\n%s", append(append([]any{err}, load(args)...), out)...)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for "+what, append([]any{d}, load(args)...)...)
		}
	}
}

// A lockedBuffer is a child's output, read while the child writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func load(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case *atomic.Int32:
			out[i] = v.Load()
		case *atomic.Int64:
			out[i] = v.Load()
		default:
			out[i] = a
		}
	}
	return out
}

// processState returns the state of process pid as Linux's /proc shows it
// ('T': stopped), or 0.
func processState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
