package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
)

func TestSnapshot(t *testing.T) {
	f, _ := bloom.New(1000, 0.01)
	f.AddString("https://a.example/")
	data, _ := f.MarshalBinary()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		if r.URL.Path != "/v1/filters/crawl/snapshot" {
			t.Errorf("GET %s", r.URL.Path)
		}
		if n.Add(1) == 1 {
			w.Write(data[:len(data)/2]) // cut short: asked again
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	c.sleep = func(<-chan struct{}, time.Duration) bool { return true }
	set, err := c.Snapshot(context.Background(), "crawl")
	if err != nil || !set.HasString("https://a.example/") || set.HasString("https://b.example/") || n.Load() != 2 {
		t.Fatalf("Snapshot: %v after %d requests", err, n.Load())
	}
	if _, ok := set.(*bloom.Filter); !ok {
		t.Errorf("a one-shard snapshot loaded as %T", set)
	}

	// WriteSnapshot does not send again what reached the writer.
	n.Store(0)
	var buf bytes.Buffer
	if got, err := c.WriteSnapshot(context.Background(), "crawl", &buf); err == nil || got != int64(len(data)/2) ||
		!strings.Contains(err.Error(), "bytes written, then") {
		t.Errorf("WriteSnapshot cut short: %d, %v", got, err)
	}
	if got, err := c.WriteSnapshot(context.Background(), "crawl", &buf); err != nil || got != int64(len(data)) {
		t.Errorf("WriteSnapshot: %d, %v", got, err)
	}
}

func TestSnapshotTooLarge(t *testing.T) {
	// A Content-Length past the largest filter is refused before anything
	// is allocated or read, and not asked again.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", strconv.FormatInt(maxSnapshotBytes+1, 10))
		w.WriteHeader(200)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	if _, err := c.Snapshot(context.Background(), "crawl"); !errors.Is(err, errTooLarge) || n.Load() != 1 {
		t.Fatalf("%v after %d requests", err, n.Load())
	}
	// Without a Content-Length, at most the limit and a byte are read.
	res := &http.Response{ContentLength: -1, Body: io.NopCloser(strings.NewReader(strings.Repeat("x", 101)))}
	if _, err := readBody(res, 100); !errors.Is(err, errTooLarge) {
		t.Errorf("101 bytes with a limit of 100: %v", err)
	}
}
