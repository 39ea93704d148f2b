package bloomstorage

// A storage whose visited set is a filter of the edge service
// (worker/README.md), reached through package client: collectors in any
// number of places share one visited set over HTTPS, with no Redis to run.
// The frontier stays with each collector, in a log file as NewFile keeps it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/edgebloom/edgebloom/client"
)

// ServiceConfig says which service filter a storage uses, and where its
// frontier is kept.
type ServiceConfig struct {
	// URL is the service's base URL ("https://bloom.example").
	URL string
	// Token is the service's secret, or a write token of Filter (a write
	// token adds and checks, and cannot make the filter).
	Token string
	// Filter is the service filter that holds the visited set.
	Filter string
	// Frontier is the path of this collector's frontier log (see NewFile):
	// each collector has its own; the visited set is shared.
	Frontier string
	// Capacity, ErrorRate and Shards make the filter when it does not exist
	// (with the secret; with a write token, which may not make one, and
	// with a Capacity of 0, the filter is used as it is, and must exist:
	// NewService asks, and returns an error naming it when it does not).
	Capacity  uint64
	ErrorRate float64
	Shards    int
	// HTTPClient, when set, is the *http.Client requests go through (its
	// Transport, proxies, timeouts).
	HTTPClient *http.Client
	// Retry, when set, replaces client.DefaultRetry.
	Retry *client.RetryPolicy
}

// NewService returns a storage whose visited set is the service filter
// cfg.Filter and whose frontier is a log at cfg.Frontier. Every call to
// the service is made with ctx. When it does not make the filter (a
// Capacity of 0, or a write token), it asks the service once whether the
// filter exists, and returns an error of client.ErrNotFound, naming it,
// when it does not.
//
// The visited set's keys are the requests' Colly IDs, as 16 hexadecimal
// digits: the filter is a crawl's seen-set, shared by its collectors, not
// a list of URLs for readers. Concurrent IsVisited calls (and Visited
// calls) go to the service together, one request for all those waiting
// while the one before is answered.
//
// The service's errors: each request is sent again as the client's retry
// policy says (a 502 shard_unavailable, a 503 with Retry-After, a lost
// connection). A request that still fails makes IsVisited or Visited
// return its error, and Colly does not fetch the page; Run stops with the
// error, and the request it was making stays in the frontier, marked as
// its own, for the next Run, which makes it without asking the service
// again: a request marked visited is never lost to a 502. An add the
// client had to send more than once (its first attempt may have reached
// the filter before the answer was lost) may be answered "not new" because
// of that first attempt: the storage counts the requests of such an add
// as new, so that a page is then fetched, at worst twice, never skipped.
func NewService(ctx context.Context, cfg ServiceConfig) (*Storage, error) {
	sv, err := newServiceSeen(ctx, cfg)
	if err != nil {
		return nil, err
	}
	st := new(stripes)
	front, err := openFileFrontier(cfg.Frontier, sv, st)
	if err != nil {
		return nil, err
	}
	return newStorage(sv, front, st), nil
}

func newServiceSeen(ctx context.Context, cfg ServiceConfig) (*serviceSeen, error) {
	if cfg.Frontier == "" {
		return nil, errors.New("bloomstorage: NewService: ServiceConfig.Frontier must name the frontier's log file")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	counted := *hc
	counted.Transport = attemptCounter{next: hc.Transport}
	opts := []client.Option{client.WithToken(cfg.Token), client.WithHTTPClient(&counted)}
	if cfg.Retry != nil {
		opts = append(opts, client.WithRetry(*cfg.Retry))
	}
	c, err := client.New(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("bloomstorage: NewService: %w", err)
	}
	made := false
	if cfg.Capacity > 0 {
		// A write token may not make filters (403): the filter is then
		// used as it is, and must exist.
		p := client.Params{Capacity: cfg.Capacity, ErrorRate: cfg.ErrorRate, Shards: cfg.Shards}
		_, err := c.Create(ctx, cfg.Filter, p)
		if err != nil && !errors.Is(err, client.ErrForbidden) {
			return nil, fmt.Errorf("bloomstorage: NewService: making %s: %w", cfg.Filter, err)
		}
		made = err == nil
	}
	if !made {
		if err := mustExist(ctx, c, cfg.Filter); err != nil {
			return nil, err
		}
	}
	sv := &serviceSeen{}
	sv.adds = batcher{send: func(keys []string) ([]bool, error) { return sv.send(ctx, c.Add, cfg.Filter, keys, true) }}
	sv.checks = batcher{send: func(keys []string) ([]bool, error) { return sv.send(ctx, c.Check, cfg.Filter, keys, false) }}
	return sv, nil
}

// mustExist asks the service once whether the filter name exists, with a
// check of one key (what the secret and a write token may both ask; a
// check of no keys sends nothing): a filter that does not exist fails
// here, not at the crawl's first request. Any other failure (a busy
// service, a token refused) is left for the crawl's requests to meet.
func mustExist(ctx context.Context, c *client.Client, name string) error {
	_, err := c.Check(ctx, name, serviceKey(make([]byte, 8)))
	if errors.Is(err, client.ErrNotFound) {
		return fmt.Errorf("bloomstorage: NewService: the service has no filter named %q: make it with the secret as Token and a Capacity (NewService makes it then), or with the CLI or client.Create: %w", name, err)
	}
	return nil
}

// serviceSeen is the visited set in a service filter.
type serviceSeen struct {
	adds, checks batcher
}

func (s *serviceSeen) add(k []byte) (bool, error) { return s.adds.do(serviceKey(k)) }
func (s *serviceSeen) has(k []byte) (bool, error) { return s.checks.do(serviceKey(k)) }
func (s *serviceSeen) close() error               { return nil }

// serviceKey is the service's key of a request ID's filter key (key()):
// the ID in hexadecimal, as text, since the service hashes keys as UTF-8.
func serviceKey(k []byte) string {
	var id uint64
	for i := len(k) - 1; i >= 0; i-- {
		id = id<<8 | uint64(k[i])
	}
	return fmt.Sprintf("%016x", id)
}

// send makes one add or check of keys; an add whose request was sent
// more than once answers each key new (see NewService).
func (s *serviceSeen) send(ctx context.Context, call func(context.Context, string, ...string) ([]bool, error), name string, keys []string, add bool) ([]bool, error) {
	n := new(atomic.Int32)
	out, err := call(context.WithValue(ctx, attemptsKey{}, n), name, keys...)
	if err != nil {
		return nil, err
	}
	if add && n.Load() > 1 {
		for i := range out {
			out[i] = true
		}
	}
	return out, nil
}

// attemptsKey carries, in a request's context, the counter of the HTTP
// requests an add or a check sent.
type attemptsKey struct{}

// attemptCounter counts each HTTP request of a context that carries a
// counter, then sends it on next (http.DefaultTransport when nil).
type attemptCounter struct{ next http.RoundTripper }

func (a attemptCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if n, ok := r.Context().Value(attemptsKey{}).(*atomic.Int32); ok {
		n.Add(1)
	}
	next := a.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// A batcher sends the keys of concurrent calls together: the first caller
// sends what waits, and goes on sending while more arrives; the others
// wait for their answer. No timer: a call alone is sent at once.
type batcher struct {
	send func(keys []string) ([]bool, error)

	mu      sync.Mutex
	pending []*batchCall
	sending bool
}

type batchCall struct {
	key  string
	out  bool
	err  error
	done chan struct{}
}

// maxBatch is the most keys one request carries.
const maxBatch = client.MaxKeysPerRequest

func (b *batcher) do(key string) (bool, error) {
	c := &batchCall{key: key, done: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if b.sending {
		b.mu.Unlock()
		<-c.done
		return c.out, c.err
	}
	b.sending = true
	for len(b.pending) > 0 {
		calls := b.pending[:min(len(b.pending), maxBatch)]
		b.pending = b.pending[len(calls):]
		b.mu.Unlock()
		keys := make([]string, len(calls))
		for i, c := range calls {
			keys[i] = c.key
		}
		out, err := b.send(keys)
		if err == nil && len(out) != len(keys) {
			err = errors.New("bloomstorage: the service answered " + strconv.Itoa(len(out)) + " results for " + strconv.Itoa(len(keys)) + " keys")
		}
		for i, c := range calls {
			if err != nil {
				c.err = err
			} else {
				c.out = out[i]
			}
			close(c.done)
		}
		b.mu.Lock()
	}
	b.sending = false
	b.mu.Unlock()
	return c.out, c.err
}
