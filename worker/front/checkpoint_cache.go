// The edge cache of the checkpoint endpoints: small answers (latest, a
// delta) are kept once made; a checkpoint's snapshot streams to the client
// and is put in the cache once it is whole and checked.
// Every key names the filter's generation, and is looked up only while the
// front's parameters of the filter name the same one. Readers of one filter
// share what one of them made; a request that misses an entry another
// request of this instance is making polls the cache instead of waiting on
// that request's work, which workerd would cancel.

package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// clientCacheControl keeps, in the edge cache, the Cache-Control the client
// gets, beside the edge's own.
const clientCacheControl = "X-Edgebloom-Client-Cache-Control"

// A cachedAnswer is a small answer kept in the cache: status 200, its
// headers and body.
type cachedAnswer struct {
	header http.Header
	body   []byte
}

// write sends a to the client, or 304 when the client has it.
func (a *cachedAnswer) write(w http.ResponseWriter, r *http.Request, hit bool) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	if hit {
		h.Set("X-Edgebloom-Cache", "hit")
	} else {
		h.Set("X-Edgebloom-Cache", "miss")
	}
	if etag := a.header.Get("ETag"); etag != "" && r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	w.Write(a.body)
}

// beingMade holds the keys this instance is making an answer for: a
// request that misses one of them polls the cache for the maker's answer
// rather than asking the objects again, so a burst of readers at an
// expired entry costs the objects one request, not one per reader. It polls
// (its own cache reads, between short sleeps) rather than waiting for the
// maker: workerd cancels a request that waits on another request's work
// with nothing of its own pending.
var beingMade = makers{held: map[string]*claim{}}

// pollEvery is how often a waiter looks in the cache again; claimWait is
// how long it waits for a maker before it takes the claim over (a var for
// the tests).
const pollEvery = 10 * time.Millisecond

var claimWait = 5 * time.Second

// makers maps each key being made to its maker's claim.
type makers struct {
	sync.Mutex
	held map[string]*claim
}

// A claim is the token of the request making a key's answer: only the
// request holding it gives it back (makers.release), and giving back a
// claim that another request has since taken over releases nothing.
type claim struct {
	key   string
	since time.Time
}

// take returns a claim of key for the caller, or nil while another request
// of this instance holds one younger than claimWait.
func (m *makers) take(key string) *claim {
	m.Lock()
	defer m.Unlock()
	if c, ok := m.held[key]; ok && time.Since(c.since) < claimWait {
		return nil
	}
	c := &claim{key: key, since: time.Now()}
	m.held[key] = c
	return c
}

// release gives c back, if it is still the claim of its key.
func (m *makers) release(c *claim) {
	m.Lock()
	defer m.Unlock()
	if m.held[c.key] == c {
		delete(m.held, c.key)
	}
}

// busy reports whether a request of this instance is making key.
func (m *makers) busy(key string) bool {
	m.Lock()
	defer m.Unlock()
	_, ok := m.held[key]
	return ok
}

// lookOrMake looks key up in the edge cache (match) and, on a miss, waits
// for the request of this instance that makes it, or claims it. hit says
// match found it; else the caller makes the answer and calls done, which
// gives its claim back (done is never nil then). A waiter that waited
// claimWait for a maker takes the claim over; the maker's done then
// releases nothing. err is the request's end (its client left, its
// deadline passed) before there was anything to make: no claim is held
// then, and a panic in match gives back the claim it took.
func lookOrMake(ctx context.Context, key string, match func() bool) (hit bool, done func(), err error) {
	var c *claim
	defer func() {
		if done == nil && c != nil {
			beingMade.release(c)
		}
	}()
	if match() {
		return true, nil, nil
	}
	if c = beingMade.take(key); c == nil {
		if await(ctx, key, match) {
			return true, nil, nil
		}
		// The maker is done without an answer, or slower than claimWait.
		c = beingMade.take(key)
	}
	if err := endedError(ctx); err != nil {
		return false, nil, err
	}
	if c == nil {
		// Another waiter took the claim over first: make it all the same,
		// as one more reader.
		return false, func() {}, nil
	}
	return false, func() { beingMade.release(c) }, nil
}

// await polls the cache for key while another request makes it; it stops
// when ctx's request ends (its client left).
func await(ctx context.Context, key string, match func() bool) bool {
	for start := time.Now(); time.Since(start) < claimWait; {
		if pause(ctx, pollEvery) != nil {
			return false
		}
		if match() {
			return true
		}
		if !beingMade.busy(key) {
			// The maker is done (or failed): one more look, then make it.
			return match()
		}
	}
	return false
}

// cached returns the answer under key from the cache, or makes it with
// build and keeps it for maxAge seconds. A request that makes it first
// takes its share of the front's budget with enter (nil: the caller holds
// one already, or the answer is cheap); one the cache answers takes none.
func cached(ctx context.Context, key string, maxAge int, enter func() (func(), error), build func() (*cachedAnswer, error)) (*cachedAnswer, bool, error) {
	var a *cachedAnswer
	match := func() bool {
		if a = cacheMatch(ctx, key); a != nil {
			a.header.Set("Cache-Control", a.header.Get(clientCacheControl))
			a.header.Del(clientCacheControl)
		}
		return a != nil
	}
	hit, done, err := lookOrMake(ctx, key, match)
	if err != nil {
		return nil, false, err
	}
	if hit {
		return a, true, nil
	}
	defer done()
	if enter != nil {
		leave, err := enter()
		if err != nil {
			return nil, false, err
		}
		defer leave()
	}
	a, err = build()
	if err == nil {
		// The client's copy is private: it was sent to a request with a
		// token, and a shared cache on the way must not give it to one
		// without. The edge cache gets a public one, read only after the
		// token check. An answer the cache does not take costs the next
		// reader one more read, never a wrong answer: it is not an error.
		stored := a.header.Clone()
		stored.Set(clientCacheControl, stored.Get("Cache-Control"))
		stored.Set("Cache-Control", "public, max-age="+strconv.Itoa(maxAge)+immutableIf(maxAge))
		cachePut(ctx, key, stored, a.body)
	}
	return a, false, err
}

func immutableIf(maxAge int) string {
	if maxAge == immutableSeconds {
		return ", immutable"
	}
	return ""
}

// cacheOrigin is the origin of every key the service keeps in the edge
// cache: its own, fixed, so that the Host a client sends does not choose
// the entry (a client varying it would make every read a miss). The keys
// are the service's alone: nothing fetches them.
const cacheOrigin = "https://edgebloom.invalid"

// cacheKey is the URL an answer is kept under in the edge cache: a path
// that names the filter, its generation and the answer alone (no query
// order, no token). The generation in every key, and the check of it
// against the filter's parameters before a lookup (meta.go bounds how old
// they are), is what makes a deleted filter's answers unreachable.
func cacheKey(name string, generation uint64, what string) string {
	return cacheOrigin + "/v1/filters/" + name + "/checkpoints/" + strconv.FormatUint(generation, 10) + "/" + what
}

// writeCachedStream sends a response from the cache, with the client's
// Cache-Control.
func writeCachedStream(w http.ResponseWriter, res *cachedStream, how string) error {
	h := w.Header()
	for _, k := range []string{"Content-Type", "Content-Disposition", "Content-Length", "X-Edgebloom-Format", "X-Edgebloom-Cursor", "X-Edgebloom-Checkpoint"} {
		if v := res.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(snapshotSeconds()))
	h.Set("X-Edgebloom-Cache", how)
	res.writeTo(w, http.StatusOK)
	return nil
}

// maxCachedSnapshot is the largest checkpoint snapshot kept in the edge
// cache. An entry reaches the cache only once it is whole and checked, so
// until then the host holds it (in JS, whose memory is collected); a
// larger snapshot streams from the shards to each reader.
const maxCachedSnapshot = 16 << 20

// A cacheWriter is an entry of the edge cache being written: kept once
// commit returns nil, never after abort.
type cacheWriter interface {
	io.Writer
	commit() error
	abort()
}

// cacheTee is a ResponseWriter that sends an answer to the client and,
// once its status is 200, writes it to an entry of the edge cache under
// key as it goes, with the edge's Cache-Control (public, maxAge). The
// entry is kept only if end is told the answer is whole; a cache that
// fails or keeps nothing costs the next reader a read, and the client gets
// its bytes all the same: what it was sent is never read again from the
// objects.
type cacheTee struct {
	http.ResponseWriter
	ctx    context.Context
	key    string
	maxAge int
	opened bool
	put    cacheWriter
}

// WriteHeader sends the status once: a later call, as every Write makes,
// sends nothing again.
func (t *cacheTee) WriteHeader(status int) {
	if t.opened {
		return
	}
	t.opened = true
	if status == http.StatusOK {
		stored := t.Header().Clone()
		stored.Del("X-Edgebloom-Cache")
		stored.Set("Cache-Control", "public, max-age="+strconv.Itoa(t.maxAge))
		length, err := strconv.ParseInt(stored.Get("Content-Length"), 10, 64)
		if err == nil && length <= maxCachedSnapshot {
			t.put, _ = openCachePut(t.ctx, t.key, stored, length)
		}
	}
	t.ResponseWriter.WriteHeader(status)
}

func (t *cacheTee) Write(b []byte) (int, error) {
	t.WriteHeader(http.StatusOK)
	n, err := t.ResponseWriter.Write(b)
	if t.put != nil && n > 0 {
		if _, perr := t.put.Write(b[:n]); perr != nil {
			t.put.abort()
			t.put = nil
		}
	}
	return n, err
}

// end keeps the entry if whole, else drops it.
func (t *cacheTee) end(whole bool) {
	switch {
	case t.put == nil:
	case whole:
		t.put.commit()
	default:
		t.put.abort()
	}
	t.put = nil
}
