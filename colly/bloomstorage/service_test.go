//go:build workerd

// The service storage against the real Worker in workerd:
// worker/test/go-colly.test.js builds the Worker, serves it on 127.0.0.1
// and runs these tests with the tag workerd and EDGEBLOOM_SERVICE_URL,
// EDGEBLOOM_SERVICE_TOKEN (the secret) and EDGEBLOOM_SERVICE_CONTROL (the
// server of the Durable Objects' test hooks) set. With the tag, the resume
// tests (stopped by MaxRequests, by Close, killed with SIGKILL) run on the
// service storage too, as the kind "service".

package bloomstorage_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/colly/bloomstorage"
)

func serviceEnv(t *testing.T) (url, token, control string) {
	url, token, control = os.Getenv("EDGEBLOOM_SERVICE_URL"), os.Getenv("EDGEBLOOM_SERVICE_TOKEN"), os.Getenv("EDGEBLOOM_SERVICE_CONTROL")
	if url == "" || token == "" || control == "" {
		t.Fatal("these tests run against the Worker that worker/test/go-colly.test.js serves: node --test worker/test/go-colly.test.js")
	}
	return url, token, control
}

func serviceConfig(name, frontier string) bloomstorage.ServiceConfig {
	return bloomstorage.ServiceConfig{
		URL: os.Getenv("EDGEBLOOM_SERVICE_URL"), Token: os.Getenv("EDGEBLOOM_SERVICE_TOKEN"),
		Filter: name, Frontier: frontier, Capacity: capacity, ErrorRate: fpRate, Shards: 4,
	}
}

var filters atomic.Int64

// filterName is a filter name no other test uses.
func filterName(prefix string) string {
	return prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(filters.Add(1), 10)
}

func serviceKinds(t *testing.T) []kind {
	serviceEnv(t)
	name, frontier := filterName("resume"), filepath.Join(t.TempDir(), "crawl.frontier")
	return []kind{{"service", func() *bloomstorage.Storage {
		return must(bloomstorage.NewService(context.Background(), serviceConfig(name, frontier)))
	}, []string{"BLOOMSTORAGE_CHILD_SERVICE_FRONTIER=" + frontier, "BLOOMSTORAGE_CHILD_NAME=" + name}}}
}

// hook calls a Durable Object's test hook (worker/shard/test-hooks.js).
func hook(t *testing.T, object, path, body string) {
	_, _, control := serviceEnv(t)
	res, err := http.Post(control+"/hook/"+object+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	res.Body.Close()
	if res.StatusCode != 204 {
		t.Errorf("hook %s %s: %d", object, path, res.StatusCode)
	}
}

// Colly's own queue on the service storage: IsVisited and Visited of 8
// requests at a time, batched; every page once.
func TestServiceCrawl(t *testing.T) {
	serviceEnv(t)
	s := newSite(t, small)
	store := must(bloomstorage.NewService(context.Background(), serviceConfig(filterName("crawl"), filepath.Join(t.TempDir(), "f"))))
	defer store.Close()
	if _, err := crawl(store, s.page(0)); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, s)
}

// Two collectors, each with its own frontier, share the service filter:
// of the pages both find, one fetches each.
func TestServiceTwoCollectors(t *testing.T) {
	serviceEnv(t)
	s := newSite(t, small)
	name := filterName("two")
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			store := must(bloomstorage.NewService(context.Background(), serviceConfig(name, filepath.Join(t.TempDir(), strconv.Itoa(i)))))
			defer store.Close()
			if _, err := resume(store, s.page(0), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	checkOnce(t, s)
}

// dropFirstAdd sends requests on, and loses the answer of the first add
// after the service made it: the client sends that add again, and the
// service answers its keys were there.
type dropFirstAdd struct{ dropped atomic.Int32 }

func (d *dropFirstAdd) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/add") && d.dropped.Add(1) == 1 {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return nil, errors.New("the connection broke before the answer")
	}
	return res, err
}

// An add whose answer was lost and that the client sent again may hear
// "not new" because of its own first attempt: the request is made all the
// same, never lost.
func TestServiceLostAnswer(t *testing.T) {
	serviceEnv(t)
	s := newSite(t, 200)
	cfg := serviceConfig(filterName("lost"), filepath.Join(t.TempDir(), "f"))
	d := &dropFirstAdd{}
	cfg.HTTPClient = &http.Client{Transport: d}
	cfg.Retry = &client.RetryPolicy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	store := must(bloomstorage.NewService(context.Background(), cfg))
	defer store.Close()
	if _, err := resume(store, s.page(0), 0); err != nil {
		t.Fatal(err)
	}
	if d.dropped.Load() == 0 {
		t.Fatal("no add answer was dropped")
	}
	checkOnce(t, s)
}

// A shard that cannot be reached stops Run with the service's error once
// the retries run out; the requests it was making stay in the frontier,
// and the next Run, with the shard back, makes every page: none is lost to
// the 502.
func TestServiceShardUnavailable(t *testing.T) {
	serviceEnv(t)
	name := filterName("down")
	var down sync.Once
	var served atomic.Int64
	s := newHeldSite(t, small, func(i, fetch int) {
		if served.Add(1) == 100 {
			down.Do(func() { hook(t, "shard:"+name+":1", "/_test/unreachable", `{"on":true}`) })
		}
	})
	cfg := serviceConfig(name, filepath.Join(t.TempDir(), "f"))
	cfg.Retry = &client.RetryPolicy{Attempts: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}
	store := must(bloomstorage.NewService(context.Background(), cfg))
	_, err := resume(store, s.page(0), 0)
	if !errors.Is(err, client.ErrShardUnavailable) {
		t.Fatalf("Run with shard 1 unreachable: %v; want an error of ErrShardUnavailable", err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	first := served.Load()
	hook(t, "shard:"+name+":1", "/_test/unreachable", `{"on":false}`)
	store = must(bloomstorage.NewService(context.Background(), cfg))
	defer store.Close()
	second := must(resume(store, s.page(0), 0))
	never, once, more := s.counts()
	t.Logf("first run: %d pages asked for; second: %d fetched; once: %d, never: %d, twice: %d", first, second, once, never, more)
	if never != 0 {
		t.Errorf("%d pages never fetched", never)
	}
	if more > 8 {
		t.Errorf("%d pages fetched twice; only the 8 requests in flight at the error may be", more)
	}
}

// A filter the service does not have, used with the secret and no
// Capacity, or with a write token (which may not make one): NewService
// says so, naming the filter and how to make it, before any crawl. With
// the filter made, the same configurations work.
func TestServiceMissingFilter(t *testing.T) {
	url, secret, _ := serviceEnv(t)
	ctx := context.Background()
	name := filterName("missing")
	admin := must(client.New(url, client.WithToken(secret)))
	write := must(admin.MintToken(ctx, "write", name, time.Hour))
	noCapacity := serviceConfig(name, filepath.Join(t.TempDir(), "a"))
	noCapacity.Capacity = 0
	withWrite := serviceConfig(name, filepath.Join(t.TempDir(), "b"))
	withWrite.Token = write.Token
	for what, cfg := range map[string]bloomstorage.ServiceConfig{"the secret and no Capacity": noCapacity, "a write token": withWrite} {
		store, err := bloomstorage.NewService(ctx, cfg)
		if err == nil {
			store.Close()
			t.Fatalf("NewService with %s and no filter %q: no error", what, name)
		}
		msg := err.Error()
		if !errors.Is(err, client.ErrNotFound) || !strings.HasPrefix(msg, "bloomstorage: NewService: ") ||
			!strings.Contains(msg, strconv.Quote(name)) || !strings.Contains(msg, "Capacity") {
			t.Errorf("NewService with %s and no filter %q: %v; want an error of ErrNotFound naming the filter and Capacity", what, name, err)
		}
	}
	if _, err := admin.Create(ctx, name, client.Params{Capacity: capacity, ErrorRate: fpRate}); err != nil {
		t.Fatal(err)
	}
	for what, cfg := range map[string]bloomstorage.ServiceConfig{"the secret and no Capacity": noCapacity, "a write token": withWrite} {
		store, err := bloomstorage.NewService(ctx, cfg)
		if err != nil {
			t.Fatalf("NewService with %s once %q exists: %v", what, name, err)
		}
		store.Close()
	}
}
