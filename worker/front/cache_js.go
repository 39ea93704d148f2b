//go:build js && wasm

package main

import (
	"context"
	"io"
	"net/http"

	"github.com/syumai/workers/cloudflare"
)

// getenv reads the front's settings from the Worker's environment.
func getenv(k string) string { return cloudflare.Getenv(k) }

// The edge cache is the Cache API's default cache of the colo. An entry
// lives for its max-age or until the colo evicts it; a miss only costs the
// objects one more read.
//
// cacheMatchStream and cacheMatch look the cache up, and cachePut and
// openCachePut write it, through the request's own exchange with JS
// (matchCache, matchCachePass and putCache in bridge_js.go), not syumai/workers'
// cache package, whose Match leaves a callback and a stream behind in Go for
// every lookup, and whose Put three callbacks for every put: in a kept
// instance that was memory taken for good at every miss and every hit.
//
// A stream found (a checkpoint's snapshot) never crosses into Go: JS keeps
// the cached response, Go gets its headers and a handle, and the client's
// answer is the cached body itself (passBody): a hit costs Go nothing
// whatever the snapshot's size.
func cacheMatchStream(ctx context.Context, key string) *cachedStream {
	status, header, handle, err := matchCachePass(ctx, key)
	if err != nil || handle == 0 {
		return nil
	}
	if status != http.StatusOK {
		return nil // JS cancels its body as the request ends
	}
	return &cachedStream{Header: header, handle: handle}
}

// A cachedStream is a response of the edge cache whose body JS holds.
type cachedStream struct {
	Header http.Header
	handle int
}

// writeTo answers the request of w with the cached body: status and w's
// headers from Go, the body straight from the cache.
func (c *cachedStream) writeTo(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
	passBody(w, c.handle)
}

func cacheMatch(ctx context.Context, key string) *cachedAnswer {
	res, err := matchCache(ctx, key)
	if err != nil || res == nil {
		return nil
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil
	}
	h := http.Header{}
	// The exchange hands a header over as the host's Headers give it: one
	// value a name, repeated fields already joined.
	for _, k := range []string{"Content-Type", "ETag", "X-Edgebloom-Format", clientCacheControl} {
		if v := res.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	return &cachedAnswer{header: h, body: body}
}

// cachePut keeps body under key, with header.
func cachePut(ctx context.Context, key string, header http.Header, body []byte) {
	putCache(ctx, key, header, body)
}

// openCachePut starts an entry of length bytes under key, written as it
// comes.
func openCachePut(ctx context.Context, key string, header http.Header, length int64) (cacheWriter, error) {
	p, err := startCachePut(ctx, key, header, length)
	if err != nil {
		return nil, err
	}
	return p, nil
}
