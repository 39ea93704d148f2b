// Package client is the Go client of the edgebloom edge service (worker/):
// named Bloom filters behind an HTTP API, which crawlers add to and check, and
// which pages, extensions and Go programs keep local copies of.
//
//	c, err := client.New("https://bloom.example", client.WithToken(secret))
//	_, err = c.Create(ctx, "crawl", client.Params{Capacity: 10_000_000, ErrorRate: 0.001, Shards: 8})
//	added, err := c.Add(ctx, "crawl", urls...)     // added[i]: urls[i] was new
//	present, err := c.Check(ctx, "crawl", urls...) // present[i]: urls[i] is probably in it
//
// # Credentials
//
// WithToken takes the service's secret (EDGEBLOOM_TOKEN), which allows
// everything, or a scoped token (MintToken, or the token package offline):
// a write token adds and checks, a read token reads statistics, checks,
// snapshots and changes (worker/README.md, "Tokens").
//
// # Batches
//
// Add and Check take any number of keys. The service takes at most
// MaxKeysPerRequest keys and MaxBodyBytes of JSON a request, so the keys
// are sent in batches that respect both, up to WithConcurrency batches at a
// time; the answers come back in the order of the keys. A key over
// MaxKeyBytes is refused before anything is sent.
//
// # Retries
//
// Every request is sent again, up to the retry policy's attempts
// (WithRetry), when the answer says so: 503 busy, 503 checkpoint_pending
// and 429 after their Retry-After (plus jitter), 502 shard_unavailable,
// 503 canceled, a connection that failed and an answer cut short after an
// exponential backoff with jitter, 409 stale_generation at once. Every request of the API is
// safe to send again: adding a key twice sets the same bits. What a retry
// can change is said where it can: Add's "new" answers, Create's Created
// and Delete's 404.
//
// # Local copies
//
// A Copy keeps a filter's copy in sync through /changes or checkpoints,
// applies the deltas with package snapshot, answers lookups locally, and
// can keep the copy and its cursor in a file to resume from.
//
// Every method takes a context; a Client is safe for concurrent use.
package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/edgebloom/edgebloom/internal/release"
)

// The service's limits (worker/README.md, "Limits").
const (
	// MaxKeysPerRequest is the most keys one add or check request takes.
	MaxKeysPerRequest = 10_000
	// MaxBodyBytes is the largest request body the service reads.
	MaxBodyBytes = 1 << 20
	// MaxKeyBytes is the longest key, in bytes of UTF-8.
	MaxKeyBytes = 8 << 10
	// MaxShardBits is the most bits a shard of a service filter has: a
	// snapshot's shards are loaded with this bound.
	MaxShardBits = 1 << 28
	// MaxShards is the most shards a filter has.
	MaxShards = 64
)

// DefaultUserAgent is the User-Agent a Client sends unless WithUserAgent
// gives another.
var DefaultUserAgent = "edgebloom-go-client/" + release.Version

// A Client calls one edgebloom service. Make it with New; it is safe for
// concurrent use.
type Client struct {
	base        *url.URL
	credential  string
	hc          *http.Client
	userAgent   string
	concurrency int
	retry       RetryPolicy
	batchKeys   int
	rand        func() float64 // [0, 1), for jitter; tests fix it
	sleep       func(ctxDone <-chan struct{}, d time.Duration) bool
}

// An Option sets up a Client.
type Option func(*Client) error

// WithToken sets the credential every request carries as
// "Authorization: Bearer <credential>": the service's secret or a scoped
// token.
func WithToken(credential string) Option {
	return func(c *Client) error {
		if credential == "" || strings.ContainsAny(credential, " \t\r\n") {
			return errors.New("client: WithToken: the credential must be non-empty, without spaces or line breaks")
		}
		c.credential = credential
		return nil
	}
}

// WithHTTPClient sets the *http.Client requests go through (its Transport,
// Timeout, proxies). The default is one of its own with no timeout beyond
// the contexts'.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("client: WithHTTPClient: nil *http.Client")
		}
		c.hc = hc
		return nil
	}
}

// WithUserAgent sets the User-Agent header; the default is
// DefaultUserAgent.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		c.userAgent = ua
		return nil
	}
}

// WithConcurrency sets how many requests of one Add or Check are in flight
// at once, 1 to 64; the default is 4.
func WithConcurrency(n int) Option {
	return func(c *Client) error {
		if n < 1 || n > 64 {
			return fmt.Errorf("client: WithConcurrency: %d; it must be from 1 to 64", n)
		}
		c.concurrency = n
		return nil
	}
}

// WithBatchKeys sets the most keys one add or check request carries, 1 to
// MaxKeysPerRequest (the default). A batch is also cut at MaxBodyBytes.
func WithBatchKeys(n int) Option {
	return func(c *Client) error {
		if n < 1 || n > MaxKeysPerRequest {
			return fmt.Errorf("client: WithBatchKeys: %d; it must be from 1 to %d", n, MaxKeysPerRequest)
		}
		c.batchKeys = n
		return nil
	}
}

// A RetryPolicy says how often and how long a request is sent again (see
// the package doc for which answers).
type RetryPolicy struct {
	// Attempts is the most times a request is sent, 1 (no retry) or more.
	Attempts int
	// MinBackoff is the wait before the first retry of a 502 or a failed
	// connection; each next waits twice as long, up to MaxBackoff. A wait
	// is drawn uniformly from half to all of it (jitter).
	MinBackoff, MaxBackoff time.Duration
	// MaxRetryAfter bounds how long a Retry-After is waited for; an answer
	// that asks for longer is returned as its error.
	MaxRetryAfter time.Duration
}

// DefaultRetry is the policy of a Client without WithRetry: 6 attempts,
// backoff from 100 ms to 5 s, Retry-After up to a minute.
var DefaultRetry = RetryPolicy{Attempts: 6, MinBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second, MaxRetryAfter: time.Minute}

// WithRetry sets the retry policy.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) error {
		if p.Attempts < 1 || p.MinBackoff < 0 || p.MaxBackoff < p.MinBackoff || p.MaxRetryAfter < 0 {
			return fmt.Errorf("client: WithRetry: %+v; Attempts must be 1 or more, 0 <= MinBackoff <= MaxBackoff, MaxRetryAfter >= 0", p)
		}
		c.retry = p
		return nil
	}
}

// New returns a client of the service at baseURL ("https://bloom.example",
// or with a path prefix the API's /v1 follows).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: New: base URL %q must be an http(s) URL without query or fragment", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base:        u,
		hc:          &http.Client{},
		userAgent:   DefaultUserAgent,
		concurrency: 4,
		retry:       DefaultRetry,
		batchKeys:   MaxKeysPerRequest,
		rand:        rand.Float64,
		sleep:       sleepCtx,
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// sleepCtx waits d, or until done is closed; it reports whether it waited
// the whole d.
func sleepCtx(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
