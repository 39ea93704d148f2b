package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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

func newSite(t *testing.T) *site {
	s := &site{fetches: map[int]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || i < 0 || i >= pages {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.fetches[i]++
		s.mu.Unlock()
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
		{[]string{"-storage", "disk", "http://127.0.0.1/"}, `-storage "disk": want memory, file or redis`},
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
