package bloomstorage_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/gocolly/colly/v2/storage"
)

// pages is the size of the test site.
const pages = 20_000

// Filters are sized for ten times the site at one in a million, so that a
// false positive, which would skip a page, is all but impossible: the
// tests assert every page.
const (
	capacity = 10 * pages
	fpRate   = 1e-6
)

// links returns the paths page i links to: its children 2i+1 and 2i+2 (a
// tree that reaches every page from page 0), its parent and page 0
// (cycles), a far page (a cross link), and the first child again, once as
// an absolute URL (duplicates).
func links(i, pages int) []int {
	out := []int{(i - 1) / 2, 0, (i*7919 + 13) % pages}
	for _, c := range []int{2*i + 1, 2*i + 2, 2*i + 1} {
		if c < pages {
			out = append(out, c)
		}
	}
	return out
}

// A site is the test site on 127.0.0.1, counting the fetches of each page.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	fetches []int
	// served counts the pages each path served whole, and again the
	// fetches of each path that arrived after one was served whole.
	served, again []int
	total         atomic.Int64
	// hold, when set, is called with a page's number before it is
	// served, and the page is served when it returns.
	hold func(i, fetch int)
	// fail, when set, is called after hold, and the page is served only
	// when it returns false (it answered the request itself).
	fail func(w http.ResponseWriter, r *http.Request, i, fetch int) bool
}

// newSite starts a site of n[0] pages, or of pages without n.
func newSite(t *testing.T, n ...int) *site {
	if len(n) > 0 {
		return newHeldSite(t, n[0], nil)
	}
	return newHeldSite(t, pages, nil)
}

// newHeldSite starts a site of n pages whose hold is hold. The server
// starts once the site is set up, so that its handlers see all of it.
func newHeldSite(t *testing.T, n int, hold func(i, fetch int)) *site {
	return newFailingSite(t, n, hold, nil)
}

// newFailingSite starts a site of n pages whose hold and fail are those
// given.
func newFailingSite(t *testing.T, n int, hold func(i, fetch int), fail func(w http.ResponseWriter, r *http.Request, i, fetch int) bool) *site {
	s := &site{fetches: make([]int, n), served: make([]int, n), again: make([]int, n), hold: hold, fail: fail}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if fail != nil {
		// Go's client sends a request again by itself when a connection
		// it reused is reset before the response: a fresh connection a
		// request lets every failure reach the collector.
		s.Config.SetKeepAlivesEnabled(false)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	pages := len(s.fetches)
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
	if err != nil || i < 0 || i >= pages {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.fetches[i]++
	fetch := s.fetches[i]
	if s.served[i] > 0 {
		s.again[i]++
	}
	s.mu.Unlock()
	s.total.Add(1)
	if s.hold != nil {
		s.hold(i, fetch)
	}
	if s.fail != nil && s.fail(w, r, i, fetch) {
		return
	}
	// A cookie a page: the collector sends back what it was given.
	http.SetCookie(w, &http.Cookie{Name: "last", Value: strconv.Itoa(i), Path: "/"})
	w.Header().Set("Content-Type", "text/html")
	var b strings.Builder
	fmt.Fprintf(&b, "<html><body><h1>%d</h1>", i)
	for j, l := range links(i, pages) {
		if j == len(links(i, pages))-1 {
			fmt.Fprintf(&b, `<a href="%s/p/%d">abs</a>`, s.URL, l)
		} else {
			fmt.Fprintf(&b, `<a href="/p/%d">%d</a>`, l, l)
		}
	}
	b.WriteString("</body></html>")
	if _, err := w.Write([]byte(b.String())); err == nil {
		s.mu.Lock()
		s.served[i]++
		s.mu.Unlock()
	}
}

func (s *site) page(i int) string { return s.URL + "/p/" + strconv.Itoa(i) }

// counts returns how many pages were fetched never, once, and more than
// once.
func (s *site) counts() (never, once, more int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.fetches {
		switch {
		case n == 0:
			never++
		case n == 1:
			once++
		default:
			more++
		}
	}
	return
}

// crawl crawls from seeds with a collector on store, 8 requests at a time
// through Colly's queue, following every link, until nothing is left. It
// returns the number of pages the collector fetched, and an error when a
// request failed.
func crawl(store storage.Storage, seeds ...string) (int, error) {
	c := colly.NewCollector(colly.IgnoreRobotsTxt())
	if err := c.SetStorage(store); err != nil {
		return 0, err
	}
	q, err := queue.New(8, &queue.InMemoryQueueStorage{MaxSize: 10 * pages * 8})
	if err != nil {
		return 0, err
	}
	var fetched atomic.Int64
	var mu sync.Mutex
	var unexpected []error
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		q.AddURL(e.Request.AbsoluteURL(e.Attr("href")))
	})
	c.OnResponse(func(r *colly.Response) { fetched.Add(1) })
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		unexpected = append(unexpected, err)
		mu.Unlock()
	})
	for _, s := range seeds {
		q.AddURL(s)
	}
	if err := q.Run(c); err != nil {
		return 0, err
	}
	if len(unexpected) > 0 {
		return 0, fmt.Errorf("%d failed requests, the first: %w", len(unexpected), unexpected[0])
	}
	return int(fetched.Load()), nil
}

// checkOnce fails t unless every page was fetched exactly once.
func checkOnce(t *testing.T, s *site) {
	t.Helper()
	never, once, more := s.counts()
	if never != 0 || more != 0 || once != len(s.fetches) {
		t.Errorf("pages fetched never: %d, once: %d, more than once: %d; want all %d once", never, once, more, len(s.fetches))
	}
}

func TestMemoryCrawl(t *testing.T) {
	s := newSite(t)
	store := must(bloomstorage.NewMemory(capacity, fpRate))
	defer store.Close()
	n := must(crawl(store, s.page(0)))
	checkOnce(t, s)
	if n != pages {
		t.Errorf("the collector saw %d responses; want %d", n, pages)
	}
	// A second crawl on the same storage fetches nothing.
	if again := must(crawl(store, s.page(0), s.page(pages-1))); again != 0 {
		t.Errorf("a second crawl on the same storage fetched %d pages; want 0", again)
	}
	checkOnce(t, s)
}

// TestRedisTwoCollectors runs two collectors, each with its own client and
// storage on one Redis filter, from two ends of the site at once: between
// them they fetch every page exactly once.
func TestRedisTwoCollectors(t *testing.T) {
	s := newSite(t)
	srv := redistest.Start(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	var n [2]int
	for i, seed := range []string{s.page(0), s.page(pages - 1)} {
		client := srv.Client()
		defer client.Close()
		store := must(bloomstorage.NewRedis(ctx, client, "crawl", capacity, fpRate))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if n[i], err = crawl(store, seed); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	checkOnce(t, s)
	t.Logf("collector 1 fetched %d pages, collector 2 %d", n[0], n[1])
	if n[0]+n[1] != pages || n[0] < pages/10 || n[1] < pages/10 {
		t.Errorf("the collectors fetched %d and %d pages; want %d between them, each a share", n[0], n[1], pages)
	}
}

// TestVisitedRace checks the one-step test-and-add that keeps two
// collectors from fetching one page: of goroutines calling Visited for the
// same request at once, exactly one gets nil, on every kind of storage.
func TestVisitedRace(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client()
	defer client.Close()
	stores := map[string]*bloomstorage.Storage{
		"memory": must(bloomstorage.NewMemory(capacity, fpRate)),
		"file":   must(bloomstorage.NewFile(filepath.Join(t.TempDir(), "f.bloom"), capacity, fpRate)),
		"redis":  must(bloomstorage.NewRedis(context.Background(), client, "race", capacity, fpRate)),
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			defer store.Close()
			for id := uint64(1); id <= 50; id++ {
				var wg sync.WaitGroup
				var ok, visited atomic.Int32
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := store.Visited(id * 0x9e3779b97f4a7c15)
						switch {
						case err == nil:
							ok.Add(1)
						case errors.Is(err, bloomstorage.ErrVisited):
							visited.Add(1)
						default:
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if ok.Load() != 1 || visited.Load() != 7 {
					t.Fatalf("request %d: %d Visited calls succeeded and %d reported ErrVisited; want 1 and 7", id, ok.Load(), visited.Load())
				}
				if v, err := store.IsVisited(id * 0x9e3779b97f4a7c15); !v || err != nil {
					t.Fatalf("IsVisited after Visited: %v, %v; want true", v, err)
				}
			}
		})
	}
}

// TestFileLocked checks that a second storage on a file in use is refused.
func TestFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	a := must(bloomstorage.NewFile(path, capacity, fpRate))
	defer a.Close()
	if _, err := bloomstorage.NewFile(path, capacity, fpRate); !errors.Is(err, bloom.ErrLocked) {
		t.Errorf("NewFile on a file in use: %v; want an error wrapping bloom.ErrLocked", err)
	}
}

// TestCookies checks that cookies are kept as Colly's InMemoryStorage
// keeps them: the same strings come back for the same URLs.
func TestCookies(t *testing.T) {
	ours := must(bloomstorage.NewMemory(100, 0.01))
	theirs := &storage.InMemoryStorage{}
	for _, s := range []storage.Storage{ours, theirs} {
		if err := s.Init(); err != nil {
			t.Fatal(err)
		}
	}
	set := []struct{ url, cookies string }{
		{"http://a.example/", "a=1; Path=/"},
		{"http://a.example/x/", "b=2; Path=/x\nc=3; Path=/; HttpOnly"},
		{"https://b.example/", "s=secret; Secure"},
		{"http://a.example/", "a=4; Path=/"},
		{"http://a.example/", "gone=1; Max-Age=0"},
	}
	for _, c := range set {
		u := mustURL(c.url)
		ours.SetCookies(u, c.cookies)
		theirs.SetCookies(u, c.cookies)
	}
	for _, u := range []string{"http://a.example/", "http://a.example/x/y", "https://b.example/", "http://b.example/", "http://c.example/"} {
		if got, want := ours.Cookies(mustURL(u)), theirs.Cookies(mustURL(u)); got != want {
			t.Errorf("Cookies(%s): got %q; want %q (InMemoryStorage)", u, got, want)
		}
	}
	if got := ours.Cookies(mustURL("http://a.example/x/")); !strings.Contains(got, "a=4") || !strings.Contains(got, "b=2") {
		t.Errorf("Cookies(http://a.example/x/) = %q; want a=4 and b=2", got)
	}
}

func mustURL(s string) *url.URL { return must(url.Parse(s)) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
