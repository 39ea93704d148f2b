package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/edgebloom/edgebloom/redisfilter/redistest"
)

const pages = 300

// A site is a test site on 127.0.0.1: page i links to its children 2i+1 and
// 2i+2, its parent, page 0, a mail address and another host, so that every
// page is reached and most more than once. It counts each page's fetches.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	fetches map[int]int
}

// newSite starts a site; fail, when given, is asked for the status of each
// fetch (the page's number, and the how-manieth fetch of it this is): 0
// serves the page.
func newSite(t *testing.T, fail ...func(i, fetch int) int) *site {
	s := &site{fetches: map[int]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || i < 0 || i >= pages {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.fetches[i]++
		fetch := s.fetches[i]
		s.mu.Unlock()
		if len(fail) > 0 {
			if code := fail[0](i, fetch); code != 0 {
				http.Error(w, http.StatusText(code), code)
				return
			}
		}
		fmt.Fprintf(w, `<html><body><a href="/p/%d">up</a> <a href="/p/0">home</a>`, (i-1)/2)
		fmt.Fprint(w, `<a href="mailto:web@example.com">mail</a> <a href="https://elsewhere.example/">away</a>`)
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < pages {
				fmt.Fprintf(w, `<a href="/p/%d">%d</a>`, c, c)
			}
		}
		fmt.Fprint(w, "</body></html>")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) page(i int) string { return s.URL + "/p/" + strconv.Itoa(i) }

// fetchedOnce fails t unless each page was fetched exactly once.
func (s *site) fetchedOnce(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range pages {
		if s.fetches[i] != 1 {
			t.Errorf("page %d fetched %d times; want once", i, s.fetches[i])
		}
	}
}

// crawler runs the command with args and the site's first page; it returns
// the URLs it printed and its stderr, and fails t unless it exits 0.
func crawler(t *testing.T, s *site, args ...string) (fetched []string, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(append(args, s.URL+"/p/0"), &out, &errOut); code != 0 {
		t.Fatalf("crawler %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return strings.Fields(out.String()), errOut.String()
}

func TestMemory(t *testing.T) {
	s := newSite(t)
	fetched, stderr := crawler(t, s, "-storage", "memory")
	if len(fetched) != pages || stderr != fmt.Sprintf("fetched %d pages\n", pages) {
		t.Errorf("printed %d URLs and %q; want %d", len(fetched), stderr, pages)
	}
	s.fetchedOnce(t)
}

// A crawl on a file, run again: the second run reads the file back and
// fetches nothing.
func TestFileRunAgain(t *testing.T) {
	s := newSite(t)
	file := filepath.Join(t.TempDir(), "crawl.bloom")
	if fetched, _ := crawler(t, s, "-storage", "file", "-file", file); len(fetched) != pages {
		t.Errorf("first run fetched %d pages; want %d", len(fetched), pages)
	}
	if fetched, stderr := crawler(t, s, "-storage", "file", "-file", file); len(fetched) != 0 {
		t.Errorf("second run fetched %d pages (%q); want none", len(fetched), stderr)
	}
	s.fetchedOnce(t)
	// The file keeps the size it was made with; -n and -p size a new one.
	if fetched, stderr := crawler(t, s, "-storage", "file", "-file", file, "-n", "2000", "-p", "0.01"); len(fetched) != 0 {
		t.Errorf("a run with other -n and -p fetched %d pages (%q); want none", len(fetched), stderr)
	}
}

// Three crawlers at once on one set in a real redis-server: of them all,
// one fetches each page.
func TestRedisShared(t *testing.T) {
	s := newSite(t)
	r := redistest.Start(t)
	var wg sync.WaitGroup
	counts := make([]int, 3)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errOut bytes.Buffer
			if code := run([]string{"-storage", "redis", "-redis", r.URL() + "/0", "-name", "site", s.URL + "/p/0"}, &out, &errOut); code != 0 {
				t.Errorf("crawler %d: exit %d\n%s", i, code, errOut.String())
			}
			counts[i] = len(strings.Fields(out.String()))
		}()
	}
	wg.Wait()
	if total := counts[0] + counts[1] + counts[2]; total != pages {
		t.Errorf("the crawlers fetched %v pages, %d in all; want %d", counts, total, pages)
	}
	s.fetchedOnce(t)
}

// A page whose first fetch fails (a 503) is fetched again and crawled; a
// page that always fails (a 500) is given up on after 3 fetches, listed on
// stderr, and makes the exit status 1; each failed fetch is printed.
func TestRetried(t *testing.T) {
	const flaky, down = 5, pages - 1 // down has no children: every other page is reached
	s := newSite(t, func(i, fetch int) int {
		switch {
		case i == flaky && fetch == 1:
			return http.StatusServiceUnavailable
		case i == down:
			return http.StatusInternalServerError
		}
		return 0
	})
	var out, errOut bytes.Buffer
	code := run([]string{"-storage", "memory", s.URL + "/p/0"}, &out, &errOut)
	stderr := errOut.String()
	if code != 1 {
		t.Errorf("exit %d; want 1 (a page given up on)\n%s", code, stderr)
	}
	fetched := strings.Fields(out.String())
	if len(fetched) != pages-1 || slices.Contains(fetched, s.page(down)) || !slices.Contains(fetched, s.page(flaky)) {
		t.Errorf("printed %d URLs; want the %d but page %d's, page %d's among them", len(fetched), pages-1, down, flaky)
	}
	s.mu.Lock()
	for i := range pages {
		want := 1
		switch i {
		case flaky:
			want = 2
		case down:
			want = 3
		}
		if s.fetches[i] != want {
			t.Errorf("page %d fetched %d times; want %d", i, s.fetches[i], want)
		}
	}
	s.mu.Unlock()
	for _, want := range []string{
		"failed: " + s.page(flaky) + ": Service Unavailable\n",
		"failed: " + s.page(down) + ": Internal Server Error\n",
		"gave up: GET " + s.page(down) + ": Internal Server Error after 3 fetch(es)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "failed: "); n != 4 {
		t.Errorf("stderr reports %d failed fetches; want 4 (page %d once, page %d 3 times):\n%s", n, flaky, down, stderr)
	}
}

// What the command says when it cannot start, and the exit status 2.
func TestErrors(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noRedis := "redis://" + closed.Addr().String() + "/0"
	closed.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-storage", "disk", "http://127.0.0.1/"}, `-storage "disk": want memory, file, redis or service`},
		{[]string{"-storage", "redis", "-redis", "127.0.0.1:6379", "http://127.0.0.1/"}, "(want redis://host:port/db)"},
		{[]string{"-storage", "redis", "-redis", noRedis, "http://127.0.0.1/"}, "cannot reach Redis at " + noRedis},
		{[]string{"ftp://127.0.0.1/"}, `"ftp://127.0.0.1/": want an absolute http or https URL`},
		{nil, "usage: crawler [flags] URL..."},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("crawler %s: exit %d, %q; want 2 and %q", strings.Join(c.args, " "), code, errOut.String(), c.want)
		}
	}
}
