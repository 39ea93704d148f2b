// The edge cache of the checkpoint endpoints: small answers (latest, a
// delta) are kept whole, a checkpoint's snapshot streams into the cache and
// out to the client at once. Readers of one filter share what one of them
// made; a request that misses an entry another request of this instance is
// making polls the cache instead of waiting on that request's work, which
// workerd would cancel.

package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
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

// Keys this instance is making an answer for: a request that misses one
// of them polls the cache for the maker's answer rather than asking the
// objects again, so a burst of readers at an expired entry costs the
// objects one request, not one per reader. It polls (its own cache reads,
// between short sleeps) rather than waiting for the maker: workerd cancels
// a request that waits on another request's work with nothing of its own
// pending.
var making = struct {
	sync.Mutex
	m map[string]time.Time
}{m: map[string]time.Time{}}

const (
	pollEvery = 10 * time.Millisecond
	pollFor   = 5 * time.Second
)

// claim reports whether the caller should make key's answer: no request of
// this instance is at it, or the one that was gave up.
func claim(key string) bool {
	making.Lock()
	defer making.Unlock()
	if t, ok := making.m[key]; ok && time.Since(t) < pollFor {
		return false
	}
	making.m[key] = time.Now()
	return true
}

func release(key string) {
	making.Lock()
	delete(making.m, key)
	making.Unlock()
}

// await polls the cache for key while another request makes it; it stops
// when ctx's request ends (its client left).
func await(ctx context.Context, key string, match func() bool) bool {
	for start := time.Now(); time.Since(start) < pollFor; {
		if pause(ctx, pollEvery) != nil {
			return false
		}
		if match() {
			return true
		}
		making.Lock()
		_, busy := making.m[key]
		making.Unlock()
		if !busy {
			// The maker is done (or failed): one more look, then make it.
			return match()
		}
	}
	return false
}

// cached returns the answer under key from the cache, or makes it with
// build and keeps it for maxAge seconds.
func cached(ctx context.Context, key string, maxAge int, build func() (*cachedAnswer, error)) (*cachedAnswer, bool, error) {
	var a *cachedAnswer
	match := func() bool {
		if a = cacheMatch(ctx, key); a != nil {
			a.header.Set("Cache-Control", a.header.Get(clientCacheControl))
			a.header.Del(clientCacheControl)
		}
		return a != nil
	}
	if match() {
		return a, true, nil
	}
	claimed := claim(key)
	if !claimed && await(ctx, key, match) {
		return a, true, nil
	}
	if err := endedError(ctx); err != nil {
		// The client left while it waited: nothing to make.
		return nil, false, err
	}
	if claimed {
		defer release(key)
	}
	a, err := build()
	if err == nil {
		// The client's copy is private: it was sent to a request with a
		// token, and a shared cache on the way must not give it to one
		// without. The edge cache gets a public one, read only after the
		// token check.
		stored := a.header.Clone()
		stored.Set(clientCacheControl, stored.Get("Cache-Control"))
		stored.Set("Cache-Control", "public, max-age="+strconv.Itoa(maxAge)+immutableIf(maxAge))
		cachePut(key, stored, a.body)
	}
	return a, false, err
}

func immutableIf(maxAge int) string {
	if maxAge == immutableSeconds {
		return ", immutable"
	}
	return ""
}

// cacheKey is the URL an answer is kept under in the edge cache: the
// request's origin and a path that names the answer alone (no query order,
// no token).
func cacheKey(r *http.Request, name, what string) string {
	host := r.Host
	if host == "" {
		host = "edgebloom.invalid"
	}
	return "https://" + host + "/v1/filters/" + name + "/checkpoints/" + what
}

// writeCachedStream sends a response from the cache, with the client's
// Cache-Control.
func writeCachedStream(w http.ResponseWriter, res *http.Response, how string) error {
	defer res.Body.Close()
	h := w.Header()
	for _, k := range []string{"Content-Type", "Content-Disposition", "Content-Length", "X-Edgebloom-Format", "X-Edgebloom-Cursor", "X-Edgebloom-Checkpoint"} {
		// syumai/workers splits a header's value at its commas.
		if v := res.Header.Values(k); len(v) > 0 {
			h.Set(k, strings.Join(v, ", "))
		}
	}
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(snapshotSeconds()))
	h.Set("X-Edgebloom-Cache", how)
	w.WriteHeader(http.StatusOK)
	io.Copy(w, res.Body)
	return nil
}

// pipeResponse is a ResponseWriter whose body goes into a pipe; ready is
// closed once the headers are set (or the writer gave up).
type pipeResponse struct {
	header http.Header
	w      *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (p *pipeResponse) Header() http.Header { return p.header }

func (p *pipeResponse) WriteHeader(int) { p.once.Do(func() { close(p.ready) }) }

func (p *pipeResponse) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.w.Write(b)
}
