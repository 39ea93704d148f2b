package bloomstorage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// small is the size of the site the resume tests crawl.
const small = 2_000

// resume is the package documentation's crawl: links go to the storage's
// frontier, the root is added (an error wrapping ErrVisited on a resumed
// crawl, ignored), and Run makes the requests 8 at a time. maxRequests is
// the collector's MaxRequests (0: no limit). It returns the responses the
// collector saw and the first error besides ErrVisited.
func resume(store *bloomstorage.Storage, root string, maxRequests uint32) (int, error) {
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	c.MaxRequests = maxRequests
	if err := c.SetStorage(store); err != nil {
		return 0, err
	}
	var fetched atomic.Int64
	var mu sync.Mutex
	var unexpected []error
	fail := func(err error) {
		mu.Lock()
		unexpected = append(unexpected, err)
		mu.Unlock()
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		if err := store.AddURL(e.Request.AbsoluteURL(e.Attr("href"))); err != nil && !errors.Is(err, bloomstorage.ErrVisited) {
			fail(err)
		}
	})
	c.OnResponse(func(r *colly.Response) { fetched.Add(1) })
	c.OnError(func(r *colly.Response, err error) { fail(err) })
	if err := store.AddURL(root); err != nil && !errors.Is(err, bloomstorage.ErrVisited) {
		return 0, err
	}
	if err := store.Run(c, 8); err != nil {
		return 0, err
	}
	if len(unexpected) > 0 {
		return 0, fmt.Errorf("%d failed requests, the first: %w", len(unexpected), unexpected[0])
	}
	return int(fetched.Load()), nil
}

// A kind opens the storage of one backend: every call opens the same
// visited set and frontier again, as a program started again does.
type kind struct {
	name string
	open func() *bloomstorage.Storage
	env  []string // what the child process needs to open it
}

func kinds(t *testing.T) []kind {
	path := filepath.Join(t.TempDir(), "crawl.bloom")
	srv := redistest.Start(t)
	name := "crawl-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return append([]kind{
		{"file", func() *bloomstorage.Storage { return must(bloomstorage.NewFile(path, capacity, fpRate)) },
			[]string{"BLOOMSTORAGE_CHILD_FILE=" + path}},
		{"redis", func() *bloomstorage.Storage {
			client := srv.Client()
			t.Cleanup(func() { client.Close() })
			return must(bloomstorage.NewRedis(context.Background(), client, name, capacity, fpRate))
		}, []string{"BLOOMSTORAGE_CHILD_REDIS=" + srv.Addr(), "BLOOMSTORAGE_CHILD_NAME=" + name}},
	}, serviceKinds(t)...)
}

// TestResumeMaxRequests stops a crawl by the collector's MaxRequests, then
// runs the same code on the same storage again without the limit: every
// page is fetched, none twice.
func TestResumeMaxRequests(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s := newSite(t, small)
			store := k.open()
			first := must(resume(store, s.page(0), small/2))
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			if first == 0 || first >= small {
				t.Fatalf("the first crawl fetched %d pages; MaxRequests meant to stop it part-way", first)
			}
			carryOn(t, k, s, first)
		})
	}
}

// TestResumeClose closes the storage while the crawl runs (Close stops
// Run), then runs the same code on the storage opened again.
func TestResumeClose(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			store := k.open()
			closed := make(chan error, 1)
			var once sync.Once
			var served atomic.Int64
			s := newHeldSite(t, small, func(i, fetch int) {
				if served.Add(1) >= small/3 {
					once.Do(func() { go func() { closed <- store.Close() }() })
				}
			})
			first, err := resume(store, s.page(0), 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			if first < small/3 || first >= small {
				t.Fatalf("the first crawl fetched %d pages; Close meant to stop it a third of the way", first)
			}
			carryOn(t, k, s, first)
		})
	}
}

// carryOn opens the storage again, as a program started again does, and
// runs the same crawl: with what the stopped one left in the frontier,
// every page of s is fetched once.
func carryOn(t *testing.T, k kind, s *site, first int) {
	t.Helper()
	store := k.open()
	defer store.Close()
	if n, err := store.QueueSize(); n == 0 || err != nil {
		t.Fatalf("after the first crawl, the frontier holds %d requests (%v); want some", n, err)
	}
	second := must(resume(store, s.page(0), 0))
	t.Logf("first run: %d pages, second: %d", first, second)
	checkOnce(t, s)
}

// TestResumeKilled runs the crawl in a child process and kills it
// (SIGKILL) while page held is being served, then runs the same code here:
// every page is fetched, the held page (taken, not finished) again, and
// no page more than twice, and only those that were being fetched at the
// kill twice: at most the 8 the child was making.
func TestResumeKilled(t *testing.T) {
	for _, k := range kinds(t) {
		t.Run(k.name, func(t *testing.T) {
			const held = small / 2
			arrived := make(chan struct{})
			release := make(chan struct{})
			s := newHeldSite(t, small, func(i, fetch int) {
				if i == held && fetch == 1 {
					close(arrived)
					<-release // served after the kill, to nobody
				}
			})
			defer close(release)
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(append(os.Environ(), "BLOOMSTORAGE_CHILD_URL="+s.page(0)), k.env...)
			out := &strings.Builder{}
			child.Stdout, child.Stderr = out, out
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- child.Wait() }()
			select {
			case err := <-exited:
				t.Fatalf("the child crawl ended (%v) before it asked for page %d:\n%s", err, held, out)
			case <-time.After(2 * time.Minute):
				t.Fatalf("the child crawl did not ask for page %d in 2 minutes (%d pages)", held, s.total.Load())
			case <-arrived:
			}
			child.Process.Kill()
			<-exited
			first := int(s.total.Load())

			store := k.open()
			defer store.Close()
			second := must(resume(store, s.page(0), 0))
			never, once, more := s.counts()
			t.Logf("the child asked for %d pages before it was killed; the second run fetched %d; pages fetched once: %d, never: %d, twice: %d",
				first, second, once, never, more)
			if first >= small || first < 10 {
				t.Errorf("the child asked for %d pages; the test meant to kill it part-way", first)
			}
			if never != 0 {
				t.Errorf("%d pages never fetched", never)
			}
			s.mu.Lock()
			if s.fetches[held] != 2 {
				t.Errorf("page %d, being fetched at the kill, was fetched %d times; want 2", held, s.fetches[held])
			}
			for i, n := range s.fetches {
				if n > 2 {
					t.Errorf("page %d fetched %d times", i, n)
				}
			}
			s.mu.Unlock()
			if more > 8 {
				t.Errorf("%d pages fetched twice; only the child's 8 requests in flight may be", more)
			}
		})
	}
}

// TestMain runs the crawl that TestResumeKilled kills when the test
// binary is started as its child.
func TestMain(m *testing.M) {
	if u := os.Getenv("BLOOMSTORAGE_CHILD_URL"); u != "" {
		if os.Getenv("BLOOMSTORAGE_CHILD_PAUSED") != "" {
			pausedChild(u)
		}
		if o := os.Getenv("BLOOMSTORAGE_CHILD_OWNING"); o != "" {
			owningChild(o)
		}
		var store *bloomstorage.Storage
		if frontier := os.Getenv("BLOOMSTORAGE_CHILD_SERVICE_FRONTIER"); frontier != "" {
			store = must(bloomstorage.NewService(context.Background(), serviceConfig(os.Getenv("BLOOMSTORAGE_CHILD_NAME"), frontier)))
		} else if addr := os.Getenv("BLOOMSTORAGE_CHILD_REDIS"); addr != "" {
			client := redis.NewClient(&redis.Options{Addr: addr})
			store = must(bloomstorage.NewRedis(context.Background(), client, os.Getenv("BLOOMSTORAGE_CHILD_NAME"), capacity, fpRate))
		} else {
			store = must(bloomstorage.NewFile(os.Getenv("BLOOMSTORAGE_CHILD_FILE"), capacity, fpRate))
		}
		_, err := resume(store, u, 0)
		fmt.Println("the crawl ended before the parent killed it:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestRequestID checks that the frontier tests the visited set with
// Colly's own request IDs: a URL added and made by Run is visited as
// Colly's HasVisited and Visit see it, in other spellings Colly takes for
// it too. (Colly's ID keeps the fragment: "#a" and "#b" are two requests.)
func TestRequestID(t *testing.T) {
	s := newSite(t, 1)
	store := must(bloomstorage.NewMemory(100, 1e-6))
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	if err := c.SetStorage(store); err != nil {
		t.Fatal(err)
	}
	u := s.URL + "/p/0?a=%7e#frag"
	if err := store.AddURL(u); err != nil {
		t.Fatal(err)
	}
	if err := store.Run(c, 1); err != nil {
		t.Fatal(err)
	}
	if s.total.Load() != 1 {
		t.Fatalf("Run made %d requests; want 1", s.total.Load())
	}
	for _, u := range []string{u, strings.Replace(u, "http://", "HTTP://", 1), strings.Replace(u, "/p/", "/./p/", 1)} {
		if v, err := c.HasVisited(u); !v || err != nil {
			t.Errorf("HasVisited(%s) = %v, %v after Run made it; want true", u, v, err)
		}
		if err := c.Visit(u); !errors.As(err, new(*colly.AlreadyVisitedError)) {
			t.Errorf("Visit(%s) of a URL Run made: %v; want colly.AlreadyVisitedError", u, err)
		}
		if err := store.AddURL(u); !errors.Is(err, bloomstorage.ErrVisited) {
			t.Errorf("AddURL(%s) of a URL Run made: %v; want an error wrapping ErrVisited", u, err)
		}
	}
}

// TestFrontierLog checks the file frontier's log as a crash leaves it: a
// record cut short at its end (a torn write) is dropped, and a file that
// is not a frontier log is refused with an error naming it.
func TestFrontierLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.bloom")
	store := must(bloomstorage.NewFile(path, 1000, 1e-6))
	for i := range 5 {
		if err := store.AddURL("http://127.0.0.1:1/p/" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	f := must(os.OpenFile(path+".frontier", os.O_APPEND|os.O_WRONLY, 0))
	f.Write([]byte{'A', 200, 1, 'n', 1, 2}) // an entry of 200 bytes, cut after 3
	f.Close()
	store = must(bloomstorage.NewFile(path, 1000, 1e-6))
	if n, err := store.QueueSize(); n != 5 || err != nil {
		t.Errorf("after a torn write, the frontier holds %d requests (%v); want 5", n, err)
	}
	store.Close()

	os.WriteFile(path+".frontier", []byte("not a log\n"), 0o644)
	_, err := bloomstorage.NewFile(path, 1000, 1e-6)
	if err == nil || !strings.Contains(err.Error(), "bloomstorage: frontier "+path+".frontier: not a frontier log") {
		t.Errorf("NewFile with a frontier that is not a log: %v; want an error naming it", err)
	}
	// The filter was unlocked: the frontier's error closed it.
	if err := os.Remove(path + ".frontier"); err != nil {
		t.Fatal(err)
	}
	must(bloomstorage.NewFile(path, 1000, 1e-6)).Close()
}

// TestRedisSharedFrontier runs the documented crawl in two collectors at
// once, each with its own client and storage on one Redis name: they share
// the frontier, between them fetch every page once, and both have a share;
// neither returns before the frontier is empty for both.
func TestRedisSharedFrontier(t *testing.T) {
	s := newSite(t, small)
	srv := redistest.Start(t)
	var wg sync.WaitGroup
	var n [2]int
	for i := range n {
		client := srv.Client()
		defer client.Close()
		store := must(bloomstorage.NewRedis(context.Background(), client, "shared", capacity, fpRate))
		defer store.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if n[i], err = resume(store, s.page(0), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	checkOnce(t, s)
	t.Logf("collector 1 fetched %d pages, collector 2 %d; the site served %d", n[0], n[1], s.total.Load())
	if n[0]+n[1] != small || n[0] < small/10 || n[1] < small/10 {
		t.Errorf("the collectors fetched %d and %d pages; want %d between them, each a share", n[0], n[1], small)
	}
}

// TestMaxDepth checks that Run refuses a request deeper than the
// collector's MaxDepth as Colly does, before it is marked visited: the
// same page added again at an allowed depth is made.
func TestMaxDepth(t *testing.T) {
	s := newSite(t, 1)
	store := must(bloomstorage.NewMemory(100, 1e-6))
	c := colly.NewCollector(colly.IgnoreRobotsTxt(), colly.MaxDepth(2))
	if err := c.SetStorage(store); err != nil {
		t.Fatal(err)
	}
	add := func(depth int) {
		t.Helper()
		if err := store.AddRequest(&colly.Request{URL: mustURL(s.page(0)), Method: "GET", Depth: depth}); err != nil {
			t.Fatal(err)
		}
		if err := store.Run(c, 1); err != nil {
			t.Fatal(err)
		}
	}
	add(3)
	if n := s.total.Load(); n != 0 {
		t.Fatalf("a request of depth 3 with MaxDepth 2 was made (%d requests)", n)
	}
	if v, _ := c.HasVisited(s.page(0)); v {
		t.Fatal("a request refused for its depth was marked visited")
	}
	add(2)
	if n := s.total.Load(); n != 1 {
		t.Fatalf("the page added again at depth 2 was made %d times; want 1", n)
	}
}
