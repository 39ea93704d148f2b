//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/snapshot"
)

// TestCheckpointDeltas: the delta between two checkpoints, consecutive or
// joined from consecutive ones, is byte for byte what /changes answers from
// the first checkpoint's cursor while the service is at the second's, and it
// never changes once published.
func TestCheckpointDeltas(t *testing.T) {
	t.Setenv("EDGEBLOOM_CHECKPOINT_SECONDS", "1")
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/ck", map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": 2}, 201)
	type latest struct {
		Generation uint64 `json:"generation"`
		Checkpoint uint64 `json:"checkpoint"`
		Cursor     string `json:"cursor"`
		Oldest     uint64 `json:"oldest"`
	}
	// next adds keys and waits for the checkpoint after them.
	var last latest
	next := func(round int) latest {
		t.Helper()
		var keys []string
		for i := range 40 {
			keys = append(keys, fmt.Sprintf("https://r%d.example/%d", round, i))
		}
		if status, body, _ := c.do("POST", "/v1/filters/ck/add", keysBody(keys)); status != 200 {
			t.Fatalf("add: %d %s", status, body)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			status, body, h := c.do("GET", "/v1/filters/ck/checkpoints/latest", "")
			var l latest
			if status != 200 || json.Unmarshal(body, &l) != nil || !strings.HasPrefix(h.Get("Cache-Control"), "private, max-age=") {
				t.Fatalf("latest: %d %s %v", status, body, h)
			}
			if l.Checkpoint > last.Checkpoint {
				last = l
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint after round %d within 10 s", round)
			}
		}
	}
	c1 := next(1)
	c2 := next(2)
	delta := func(from, to latest) ([]byte, string) {
		t.Helper()
		status, body, h := c.do("GET", fmt.Sprintf("/v1/filters/ck/checkpoints/%d/%d/delta?from=%d", to.Generation, to.Checkpoint, from.Checkpoint), "")
		if status != 200 || h.Get("Cache-Control") != fmt.Sprintf("private, max-age=%d, immutable", immutableSeconds) || h.Get("ETag") == "" {
			t.Fatalf("delta %d to %d: %d %s %v", from.Checkpoint, to.Checkpoint, status, body, h)
		}
		return body, h.Get("ETag")
	}
	changes := func(from latest) []byte {
		t.Helper()
		status, body, _ := c.do("GET", "/v1/filters/ck/changes?since="+from.Cursor, "")
		if status != 200 {
			t.Fatalf("changes: %d %s", status, body)
		}
		return body
	}
	d12, etag := delta(c1, c2)
	if want := changes(c1); !bytes.Equal(d12, want) {
		t.Fatalf("delta 1 to 2 is %d bytes, not /changes' %d", len(d12), len(want))
	}
	c3 := next(3)
	d13, _ := delta(c1, c3)
	if want := changes(c1); !bytes.Equal(d13, want) {
		t.Fatalf("delta 1 to 3 (joined) is %d bytes, not /changes' %d", len(d13), len(want))
	}
	if again, _ := delta(c1, c2); !bytes.Equal(again, d12) {
		t.Fatal("the delta from 1 to 2 changed after checkpoint 3")
	}
	if status, _, _ := c.do("GET", fmt.Sprintf("/v1/filters/ck/checkpoints/%d/2/delta?from=1", c2.Generation), "", "If-None-Match", etag); status != 304 {
		t.Fatalf("If-None-Match: %d; want 304", status)
	}
	for _, tt := range []struct {
		path string
		want int
		code string
	}{
		{fmt.Sprintf("/%d/9/delta?from=1", c3.Generation), 404, "checkpoint_unknown"},
		{fmt.Sprintf("/%d/3/delta?from=3", c3.Generation), 400, "invalid_params"},
		{fmt.Sprintf("/%d/3/delta", c3.Generation), 400, "invalid_params"},
		{fmt.Sprintf("/%d/3/delta?from=1", c3.Generation+1), 410, "checkpoint_gone"},
		{"/x/3/delta?from=1", 404, "not_found"},
		{fmt.Sprintf("/%d/3/other", c3.Generation), 404, "not_found"},
	} {
		status, body, _ := c.do("GET", "/v1/filters/ck/checkpoints"+tt.path, "")
		if status != tt.want || !strings.Contains(string(body), `"`+tt.code+`"`) {
			t.Errorf("GET checkpoints%s: %d %s; want %d %s", tt.path, status, body, tt.want, tt.code)
		}
	}
	if status, _, h := c.do("POST", "/v1/filters/ck/checkpoints/latest", ""); status != 405 || h.Get("Allow") != "GET" {
		t.Errorf("POST latest: %d %v", status, h)
	}
	// The snapshot of a checkpoint carries its cursor.
	status, snap, h := c.do("GET", fmt.Sprintf("/v1/filters/ck/checkpoints/%d/%d/snapshot", c3.Generation, c3.Checkpoint), "")
	if status != 200 || h.Get("X-Edgebloom-Cursor") != c3.Cursor || len(snap) == 0 {
		t.Fatalf("snapshot: %d %v", status, h)
	}
}

// faultyObjects passes requests on to Objects, and spoils the snapshot body
// of the shard named spoil, as a shard that fails or lies part way would.
type faultyObjects struct {
	Objects
	mu    sync.Mutex
	spoil string
	how   func([]byte) []byte
}

func (f *faultyObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	res, err := f.Objects.Fetch(ctx, object, method, path, header, body)
	f.mu.Lock()
	spoil, how := f.spoil, f.how
	f.mu.Unlock()
	if err != nil || object != spoil || path != "/snapshot" || res.StatusCode != 200 {
		return res, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(how(b)))
	return res, nil
}

// TestCheckpointSnapshotKeptOnlyWhole: a checkpoint snapshot whose shard
// sends a record short, long or with a byte changed is sent short of its
// length and kept nowhere: the next read makes it again from the shards,
// whole, and the one after reads that from the cache.
func TestCheckpointSnapshotKeptOnlyWhole(t *testing.T) {
	t.Setenv("EDGEBLOOM_CHECKPOINT_SECONDS", "1")
	for _, tt := range []struct {
		name string
		how  func([]byte) []byte
	}{
		{"short", func(b []byte) []byte { return b[:len(b)-100] }},
		{"long", func(b []byte) []byte { return append(b, 0) }},
		{"changed", func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := &faultyObjects{Objects: newMemoryObjects()}
			srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
			t.Cleanup(srv.Close)
			c := &client{t, srv.URL}
			name := "whole-" + tt.name
			c.json("PUT", "/v1/filters/"+name, map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": 2}, 201)
			c.json("POST", "/v1/filters/"+name+"/add", map[string]any{"keys": []string{"a", "b", "c"}}, 200)
			var latest struct {
				Generation, Checkpoint uint64
			}
			for deadline := time.Now().Add(10 * time.Second); latest.Checkpoint == 0; time.Sleep(50 * time.Millisecond) {
				status, body, _ := c.do("GET", "/v1/filters/"+name+"/checkpoints/latest", "")
				if status == 200 {
					json.Unmarshal(body, &latest)
				}
				if time.Now().After(deadline) {
					t.Fatal("no checkpoint within 10 s")
				}
			}
			path := fmt.Sprintf("/v1/filters/%s/checkpoints/%d/%d/snapshot", name, latest.Generation, latest.Checkpoint)
			objs.mu.Lock()
			objs.spoil, objs.how = "shard:"+name+":1", tt.how
			objs.mu.Unlock()
			status, body, h := c.do("GET", path, "")
			if n, _ := strconv.Atoi(h.Get("Content-Length")); status != 200 || len(body) >= n {
				t.Fatalf("spoiled: %d, %d bytes of %s; want 200 and fewer bytes than its length", status, len(body), h.Get("Content-Length"))
			}
			objs.mu.Lock()
			objs.spoil = ""
			objs.mu.Unlock()
			for _, want := range []string{"miss", "hit"} {
				status, body, h = c.do("GET", path, "")
				if n, _ := strconv.Atoi(h.Get("Content-Length")); status != 200 || len(body) != n || h.Get("X-Edgebloom-Cache") != want {
					t.Fatalf("then: %d, %d bytes of %s, %s; want 200, whole, %s", status, len(body), h.Get("Content-Length"), h.Get("X-Edgebloom-Cache"), want)
				}
				if _, err := snapshot.Load(body, maxShardBits); err != nil {
					t.Fatalf("then (%s): %v", want, err)
				}
			}
		})
	}
}
