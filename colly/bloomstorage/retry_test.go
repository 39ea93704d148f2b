package bloomstorage_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/gocolly/colly/v2"
)

// flakyPages is the size of the site whose pages each fail their first
// fetch; flakyTimeout is the collector's request timeout there.
const (
	flakyPages   = 60
	flakyTimeout = 1500 * time.Millisecond
)

// testRetry fetches each request up to 6 times, soon: the first fetch of
// every page fails by design, and a fetch slowed past the timeout by a
// busy machine must not be the last one.
var testRetry = bloomstorage.Retry{Attempts: 6, Backoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}

// failFirst fails the first fetch of each page, in turn by a 500, by a
// connection reset (RST) before any response, and by a stall that the
// collector's timeout ends.
func failFirst(w http.ResponseWriter, r *http.Request, i, fetch int) bool {
	if fetch > 1 {
		return false
	}
	switch i % 3 {
	case 0:
		http.Error(w, "back in a moment", http.StatusInternalServerError)
	case 1:
		reset(w)
	case 2:
		<-r.Context().Done() // the collector hangs up at its timeout
	}
	return true
}

// reset closes the request's connection with a TCP RST.
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}

// A retryKind opens a storage of one backend; open gives the same visited
// set and frontier again, as a program started again does (memory: the
// same storage), and stop ends a Run part-way (Close, or Stop in memory)
// and returns what Close returned.
type retryKind struct {
	name string
	open func() *bloomstorage.Storage
	stop func(*bloomstorage.Storage) error
}

func retryKinds(t *testing.T) []retryKind {
	var mem *bloomstorage.Storage
	out := []retryKind{{"memory", func() *bloomstorage.Storage {
		if mem == nil {
			mem = must(bloomstorage.NewMemory(capacity, fpRate))
		}
		return mem
	}, func(s *bloomstorage.Storage) error { s.Stop(); return nil }}}
	for _, k := range kinds(t) {
		out = append(out, retryKind{k.name, k.open, (*bloomstorage.Storage).Close})
	}
	return out
}

// A tally counts what a crawl's collector saw: the responses of each page
// (OnResponse), and the failed fetches (OnError).
type tally struct {
	ok     []atomic.Int32
	errors atomic.Int32
	all    atomic.Int32
}

// retryCrawl is the documented crawl with a request timeout: links go to
// the frontier, Run makes it 8 requests at a time; after each response,
// after(n) is called with the number of responses so far.
func retryCrawl(store *bloomstorage.Storage, s *site, tl *tally, after func(n int)) error {
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	c.SetRequestTimeout(flakyTimeout)
	if err := c.SetStorage(store); err != nil {
		return err
	}
	if err := store.SetRetry(testRetry); err != nil {
		return err
	}
	unexpected := follow(c, store)
	c.OnResponse(func(r *colly.Response) {
		if i, err := strconv.Atoi(strings.TrimPrefix(r.Request.URL.Path, "/p/")); err == nil {
			tl.ok[i].Add(1)
		}
		if n := int(tl.all.Add(1)); after != nil {
			after(n)
		}
	})
	c.OnError(func(r *colly.Response, err error) { tl.errors.Add(1) })
	if err := store.AddURL(s.page(0)); err != nil && !errors.Is(err, bloomstorage.ErrVisited) {
		return err
	}
	if err := store.Run(c, 8); err != nil {
		return err
	}
	return unexpected()
}

// follow adds the links of c's pages to store's frontier; the function it
// returns gives the errors of AddURL but ErrVisited, joined.
func follow(c *colly.Collector, store *bloomstorage.Storage) func() error {
	var mu sync.Mutex
	var errs []error
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if err := store.AddURL(e.Request.AbsoluteURL(e.Attr("href"))); err != nil && !errors.Is(err, bloomstorage.ErrVisited) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	})
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		return errors.Join(errs...)
	}
}

// checkRetried fails t unless the collector got every page of s once,
// each after a failed first fetch, and no request was given up on.
func checkRetried(t *testing.T, s *site, tl *tally, store *bloomstorage.Storage) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var missing, twice, once []int
	for i, n := range s.fetches {
		switch got := tl.ok[i].Load(); {
		case got == 0:
			missing = append(missing, i)
		case got > 1:
			twice = append(twice, i)
		}
		if n < 2 {
			once = append(once, i)
		}
	}
	if len(missing) > 0 || len(twice) > 0 {
		t.Errorf("pages the collector never got: %v; got more than once: %v", missing, twice)
	}
	if len(once) > 0 {
		t.Errorf("pages fetched once although their first fetch fails: %v", once)
	}
	if n := int(tl.errors.Load()); n < len(s.fetches) {
		t.Errorf("OnError was called %d times; want at least once a page (%d)", n, len(s.fetches))
	}
	if f := must(store.Failures()); len(f) != 0 {
		t.Errorf("%d requests given up on, the first: %v", len(f), f[0])
	}
}

// TestRetryFailedFetches crawls a site whose pages each fail their first
// fetch (a 500, a reset connection, a stall past the timeout) with each
// storage: every page is fetched, none twice after it succeeded.
func TestRetryFailedFetches(t *testing.T) {
	for _, k := range retryKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s := newFailingSite(t, flakyPages, nil, failFirst)
			store := k.open()
			defer store.Close()
			tl := &tally{ok: make([]atomic.Int32, flakyPages)}
			if err := retryCrawl(store, s, tl, nil); err != nil {
				t.Fatal(err)
			}
			checkRetried(t, s, tl, store)
		})
	}
}

// TestRetryResumed stops the same crawl in the middle, with requests
// waiting to be fetched again in the frontier, and runs it again on the
// storage opened again: every page is fetched, none twice after it
// succeeded.
func TestRetryResumed(t *testing.T) {
	for _, k := range retryKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s := newFailingSite(t, flakyPages, nil, failFirst)
			store := k.open()
			tl := &tally{ok: make([]atomic.Int32, flakyPages)}
			var once sync.Once
			stopped := make(chan error, 1)
			if err := retryCrawl(store, s, tl, func(n int) {
				if n >= flakyPages/3 {
					once.Do(func() { go func() { stopped <- k.stop(store) }() })
				}
			}); err != nil {
				t.Fatal(err)
			}
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			first := int(tl.all.Load())
			if first >= flakyPages {
				t.Fatalf("the first run got all %d pages; the test meant to stop it part-way", first)
			}
			// Pages whose fetch failed in the first run and that it did
			// not fetch again: the second run must.
			var pending []int
			s.mu.Lock()
			for i, n := range s.fetches {
				if n > 0 && tl.ok[i].Load() == 0 {
					pending = append(pending, i)
				}
			}
			s.mu.Unlock()
			if len(pending) == 0 {
				t.Fatal("the first run left no failed fetch to make again; the test meant to stop it with some")
			}
			store = k.open()
			defer store.Close()
			if n, err := store.QueueSize(); n == 0 || err != nil {
				t.Fatalf("after the first run, the frontier holds %d requests (%v); want some", n, err)
			}
			if err := retryCrawl(store, s, tl, nil); err != nil {
				t.Fatal(err)
			}
			t.Logf("first run: %d pages, second: %d, of which %d had failed in the first", first, int(tl.all.Load())-first, len(pending))
			checkRetried(t, s, tl, store)
		})
	}
}

// TestRetryGivesUp checks the requests a crawl gives up on: a 404 at
// once, a page that always answers 503 after DefaultRetry's attempts;
// a 429 (with Retry-After) is fetched again and succeeds. Failures lists
// both with why, also on the storage opened again, and AddURL refuses
// them as visited; RetryFailures puts them back for the next Run.
func TestRetryGivesUp(t *testing.T) {
	const n = 20
	down, limited := n-1, n-2
	for _, k := range retryKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			var back atomic.Bool
			s := newFailingSite(t, n, nil, func(w http.ResponseWriter, r *http.Request, i, fetch int) bool {
				switch {
				case i == down && !back.Load():
					http.Error(w, "down", http.StatusServiceUnavailable)
				case i == limited && fetch == 1:
					w.Header().Set("Retry-After", "1")
					http.Error(w, "slow down", http.StatusTooManyRequests)
				default:
					return false
				}
				return true
			})
			store := k.open()
			c := colly.NewCollector(colly.IgnoreRobotsTxt())
			must(0, c.SetStorage(store))
			must(0, store.SetRetry(bloomstorage.Retry{Attempts: bloomstorage.DefaultRetry.Attempts, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond}))
			var errs atomic.Int32
			c.OnHTML("a[href]", func(e *colly.HTMLElement) { store.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) })
			c.OnError(func(r *colly.Response, err error) { errs.Add(1) })
			must(0, store.AddURL(s.page(0)))
			must(0, store.AddURL(s.URL+"/missing"))
			must(0, store.Run(c, 4))

			s.mu.Lock()
			for i, got := range s.fetches {
				want := 1
				switch i {
				case down:
					want = bloomstorage.DefaultRetry.Attempts
				case limited:
					want = 2
				}
				if got != want {
					t.Errorf("page %d fetched %d times; want %d", i, got, want)
				}
			}
			s.mu.Unlock()
			if got, want := errs.Load(), int32(1+bloomstorage.DefaultRetry.Attempts+1); got != want {
				t.Errorf("OnError called %d times; want %d (404, the 503s, the 429)", got, want)
			}
			check := func(store *bloomstorage.Storage) {
				t.Helper()
				f := must(store.Failures())
				if len(f) != 2 {
					t.Fatalf("Failures: %v; want the 404 and the 503", f)
				}
				if f[0].URL > f[1].URL {
					f[0], f[1] = f[1], f[0]
				}
				if g := f[0]; g.URL != s.URL+"/missing" || g.Method != "GET" || g.Status != 404 || g.Attempts != 1 || g.Err != "Not Found" || g.Time.IsZero() {
					t.Errorf("the 404's failure: %+v", g)
				}
				if g := f[1]; g.URL != s.page(down) || g.Status != 503 || g.Attempts != bloomstorage.DefaultRetry.Attempts || g.Err != "Service Unavailable" {
					t.Errorf("the 503's failure: %+v", g)
				}
				if err := store.AddURL(s.page(down)); !errors.Is(err, bloomstorage.ErrVisited) {
					t.Errorf("AddURL of a page given up on: %v; want ErrVisited", err)
				}
			}
			check(store)
			if k.name != "memory" {
				must(0, store.Close())
				store = k.open()
				check(store)
			}

			// The site is back: RetryFailures puts both back, and a Run
			// fetches them once more; the 404 is given up on again.
			back.Store(true)
			if n, err := store.RetryFailures(); n != 2 || err != nil {
				t.Fatalf("RetryFailures: %d, %v; want 2", n, err)
			}
			if f := must(store.Failures()); len(f) != 0 {
				t.Errorf("Failures after RetryFailures: %v; want none", f)
			}
			if k.name != "memory" {
				must(0, store.Close())
				store = k.open()
			}
			c = colly.NewCollector(colly.IgnoreRobotsTxt())
			must(0, c.SetStorage(store))
			must(0, store.Run(c, 4))
			s.mu.Lock()
			if got, want := s.fetches[down], bloomstorage.DefaultRetry.Attempts+1; got != want {
				t.Errorf("the page given up on and put back was fetched %d times in all; want %d", got, want)
			}
			s.mu.Unlock()
			if f := must(store.Failures()); len(f) != 1 || f[0].URL != s.URL+"/missing" || f[0].Attempts != 1 {
				t.Errorf("Failures after the 404 was put back and fetched again: %+v; want it alone, 1 fetch", f)
			}
			store.Close()
		})
	}
}

func TestSetRetry(t *testing.T) {
	store := must(bloomstorage.NewMemory(100, 0.01))
	for _, r := range []bloomstorage.Retry{{Attempts: 0}, {Attempts: 256}, {Attempts: 2, Backoff: time.Second}, {Attempts: 2, Backoff: -1}} {
		if err := store.SetRetry(r); err == nil || !strings.HasPrefix(err.Error(), "bloomstorage: SetRetry: ") {
			t.Errorf("SetRetry(%+v): %v; want an error naming the field", r, err)
		}
	}
	if err := store.SetRetry(bloomstorage.Retry{Attempts: 1}); err != nil {
		t.Errorf("SetRetry with no retry at all: %v", err)
	}
}

// TestKilledOwning kills a collector between the mark of a request in the
// frontier and its add to the visited set, then crawls on with another:
// the page is fetched once, by the one that reaches it through a link or
// by the one that picks the marked request up (on Redis, once the dead
// collector's lease runs out), never by both.
func TestKilledOwning(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			const held = small / 2
			s := newSite(t, small)
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(append(os.Environ(), "BLOOMSTORAGE_CHILD_URL="+s.page(0), "BLOOMSTORAGE_CHILD_OWNING="+s.page(held)), k.env...)
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			child.Stderr = os.Stderr
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			owning := make(chan struct{})
			var said sync.Once
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					if sc.Text() == "owning" {
						// Two workers may mark the page at once, from two
						// entries of it (a Redis frontier's own takes no
						// stripe): each says so.
						said.Do(func() { close(owning) })
					} else {
						lines <- sc.Text()
					}
				}
				close(lines)
			}()
			select {
			case l := <-lines:
				t.Fatalf("the child crawl said %q before it marked page %d", l, held)
			case <-time.After(2 * time.Minute):
				t.Fatalf("the child crawl did not mark page %d in 2 minutes (%d pages)", held, s.total.Load())
			case <-owning:
			}
			child.Process.Kill()
			child.Wait()
			first := int(s.total.Load())

			store := k.open()
			defer store.Close()
			second := must(resume(store, s.page(0), 0))
			never, once, more := s.counts()
			t.Logf("the child fetched %d pages before it was killed; the second run %d; pages fetched once: %d, never: %d, twice: %d",
				first, second, once, never, more)
			s.mu.Lock()
			defer s.mu.Unlock()
			if n := s.fetches[held]; n != 1 {
				t.Errorf("page %d, marked by the killed collector and not added, was fetched %d times; want 1", held, n)
			}
			if never != 0 {
				t.Errorf("%d pages never fetched", never)
			}
			if more > 8 {
				t.Errorf("%d pages fetched twice; only the child's requests in flight may be", more)
			}
		})
	}
}

// owningChild is TestKilledOwning's child: when its crawl has marked the
// request of u, it says "owning" and stops there until it is killed.
func owningChild(u string) {
	id := bloomstorage.RequestID(u)
	bloomstorage.SetOwningHook(func(got uint64) {
		if got == id {
			fmt.Println("owning")
			select {}
		}
	})
}

// TestRetryNotForFailuresThatStay checks two fetches without a response
// that fetching again does not change: a redirect the collector's rules
// refuse is dropped as Colly's Visit drops a refused request (no failure),
// and a certificate that does not verify is given up on at once.
func TestRetryNotForFailuresThatStay(t *testing.T) {
	var served atomic.Int32
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	}))
	defer redirect.Close()
	tlsSite := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSite.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake the collector refuses
	tlsSite.StartTLS()
	defer tlsSite.Close()

	store := must(bloomstorage.NewMemory(100, 1e-6))
	must(0, store.SetRetry(bloomstorage.Retry{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}))
	c := colly.NewCollector(colly.IgnoreRobotsTxt(), colly.AllowedDomains("127.0.0.1"))
	must(0, c.SetStorage(store))
	var errs atomic.Int32
	c.OnError(func(r *colly.Response, err error) { errs.Add(1) })
	must(0, store.AddURL(redirect.URL+"/"))
	must(0, store.AddURL(tlsSite.URL+"/"))
	must(0, store.Run(c, 2))
	if n := served.Load(); n != 1 {
		t.Errorf("the page redirecting to a domain the collector refuses was fetched %d times; want 1", n)
	}
	f := must(store.Failures())
	if len(f) != 1 || f[0].URL != tlsSite.URL+"/" || f[0].Attempts != 1 || !strings.Contains(f[0].Err, "certificate") {
		t.Errorf("Failures: %+v; want the TLS page alone, 1 fetch, a certificate error", f)
	}
	if n := errs.Load(); n != 2 {
		t.Errorf("OnError called %d times; want 2", n)
	}
}

// TestRetryAfter checks where a Retry-After header sets the wait before a
// request is fetched again: on a 429 and a 503, in seconds or as a date,
// up to MaxBackoff; a 500 that sends one waits its backoff. The test stops
// the crawl once each page has failed its first fetch and reads when each
// is due in the Redis frontier.
func TestRetryAfter(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	defer client.Close()
	store := must(bloomstorage.NewRedis(context.Background(), client, "retry-after", capacity, fpRate))
	defer store.Close()
	r := bloomstorage.Retry{Attempts: 2, Backoff: time.Minute, MaxBackoff: 3 * time.Hour}
	must(0, store.SetRetry(r))
	start := time.Now()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/500":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusInternalServerError)
		case "/503":
			w.Header().Set("Retry-After", start.Add(2*time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/429":
			w.Header().Set("Retry-After", "18000") // 5 h, past MaxBackoff
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer site.Close()
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	must(0, c.SetStorage(store))
	var failed atomic.Int32
	c.OnError(func(r *colly.Response, err error) {
		if failed.Add(1) == 3 {
			store.Stop()
		}
	})
	for _, p := range []string{"/500", "/503", "/429"} {
		must(0, store.AddURL(site.URL+p))
	}
	must(0, store.Run(c, 3))
	end := time.Now()

	due := must(client.ZRangeWithScores(context.Background(), "{retry-after:frontier}:later", 0, -1).Result())
	want := map[string][2]time.Time{
		"/500": {start.Add(r.Backoff / 2), end.Add(r.Backoff)},
		"/503": {start.Add(2*time.Hour - time.Second), end.Add(2 * time.Hour)},
		"/429": {start.Add(r.MaxBackoff), end.Add(r.MaxBackoff)},
	}
	if len(due) != len(want) {
		t.Fatalf("%d requests to fetch again in the frontier; want %d", len(due), len(want))
	}
	for _, z := range due {
		path := "?"
		for p := range want {
			if strings.Contains(z.Member.(string), site.URL+p) {
				path = p
			}
		}
		at := time.UnixMilli(int64(z.Score))
		if w, ok := want[path]; !ok || at.Before(w[0].Truncate(time.Millisecond)) || at.After(w[1]) {
			t.Errorf("%s is due %v after the crawl started; want %v to %v", path, at.Sub(start), w[0].Sub(start), w[1].Sub(start))
		}
	}
}
