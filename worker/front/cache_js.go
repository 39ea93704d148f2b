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
// (matchCache and putCache in bridge_js.go), not syumai/workers' cache
// package, whose Match leaves a callback and a stream behind in Go for
// every lookup, and whose Put three callbacks for every put: in a kept
// instance that was memory taken for good at every miss and every hit.
func cacheMatchStream(ctx context.Context, key string) *http.Response {
	res, err := matchCache(ctx, key)
	if err != nil || res == nil {
		return nil
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil
	}
	return res
}

func cacheMatch(ctx context.Context, key string) *cachedAnswer {
	res := cacheMatchStream(ctx, key)
	if res == nil {
		return nil
	}
	defer res.Body.Close()
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
