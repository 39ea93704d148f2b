//go:build !js

package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// getenv reads the front's settings from the process environment on the
// host.
func getenv(k string) string { return os.Getenv(k) }

// The host's stand-in for the edge cache: entries in memory until their
// max-age passes, as Cloudflare's cache keeps them.
var hostCache = struct {
	sync.Mutex
	m map[string]hostEntry
}{m: map[string]hostEntry{}}

type hostEntry struct {
	header  http.Header
	body    []byte
	expires time.Time
}

func maxAgeOf(h http.Header) time.Duration {
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "max-age="); ok {
			n, _ := strconv.Atoi(v)
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

func cacheMatch(_ context.Context, key string) *cachedAnswer {
	hostCache.Lock()
	defer hostCache.Unlock()
	e, ok := hostCache.m[key]
	if !ok || time.Now().After(e.expires) {
		return nil
	}
	return &cachedAnswer{header: e.header.Clone(), body: e.body}
}

func cachePut(key string, header http.Header, body []byte) {
	hostCache.Lock()
	defer hostCache.Unlock()
	hostCache.m[key] = hostEntry{header: header.Clone(), body: bytes.Clone(body), expires: time.Now().Add(maxAgeOf(header))}
}

func cacheMatchStream(ctx context.Context, key string) *http.Response {
	a := cacheMatch(ctx, key)
	if a == nil {
		return nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: a.header, Body: io.NopCloser(bytes.NewReader(a.body))}
}

func cachePutStream(key string, header http.Header, body io.Reader, _ int64) error {
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	cachePut(key, header, b)
	return nil
}
