//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/syumai/workers/cloudflare"
	"github.com/syumai/workers/cloudflare/cache"
)

// getenv reads the front's settings from the Worker's environment.
func getenv(k string) string { return cloudflare.Getenv(k) }

// The edge cache is the Cache API's default cache of the colo
// (syumai/workers' cloudflare/cache). An entry lives for its max-age or
// until the colo evicts it; a miss only costs the objects one more read.
func edgeRequest(key string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, key, nil)
	return req
}

// cacheMatchStream and cacheMatch look the cache up through the request's
// own exchange with JS (matchCache in bridge_js.go), not syumai/workers'
// cache package, whose Match leaves a callback and a stream behind in Go
// for every lookup: in a kept instance that was memory taken for good at
// every "latest" answered from the cache.
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

func cachePut(key string, header http.Header, body []byte) {
	cachePutStream(key, header, bytes.NewReader(body), int64(len(body)))
}

func cachePutStream(key string, header http.Header, body io.Reader, length int64) error {
	res := &http.Response{StatusCode: http.StatusOK, Header: header, Body: io.NopCloser(body), ContentLength: length}
	return cache.New().Put(edgeRequest(key), res)
}
