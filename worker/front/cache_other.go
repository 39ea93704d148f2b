//go:build !js

package main

import (
	"bytes"
	"context"
	"fmt"
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

func cachePut(_ context.Context, key string, header http.Header, body []byte) {
	hostCache.Lock()
	defer hostCache.Unlock()
	hostCache.m[key] = hostEntry{header: header.Clone(), body: bytes.Clone(body), expires: time.Now().Add(maxAgeOf(header))}
}

func cacheMatchStream(ctx context.Context, key string) *cachedStream {
	a := cacheMatch(ctx, key)
	if a == nil {
		return nil
	}
	return &cachedStream{Header: a.header, body: a.body}
}

// A cachedStream is a response of the edge cache: on the host, its bytes.
type cachedStream struct {
	Header http.Header
	body   []byte
}

// writeTo answers the request of w with the cached body.
func (c *cachedStream) writeTo(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
	w.Write(c.body)
}

func openCachePut(ctx context.Context, key string, header http.Header, length int64) (cacheWriter, error) {
	return &hostPut{ctx: ctx, key: key, header: header.Clone(), length: length}, nil
}

// hostPut is an entry being written: kept at commit, when it has all its
// bytes.
type hostPut struct {
	ctx    context.Context
	key    string
	header http.Header
	length int64
	body   bytes.Buffer
}

func (p *hostPut) Write(b []byte) (int, error) { return p.body.Write(b) }

func (p *hostPut) commit() error {
	if int64(p.body.Len()) != p.length {
		return fmt.Errorf("a cache entry of %d bytes got %d", p.length, p.body.Len())
	}
	cachePut(p.ctx, p.key, p.header, p.body.Bytes())
	return nil
}

func (p *hostPut) abort() {}
