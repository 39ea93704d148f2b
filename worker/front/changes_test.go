//go:build !(js && wasm)

package main

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/snapshot"
)

// A copy kept by GET /changes, in Go: after every sync its bytes are the
// snapshot's and every acknowledged key is in it; a sync with nothing new
// is a small delta; a cursor of a deleted filter gets the snapshot again.
func TestChanges(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			c, _ := newTestServer(t)
			base := "/v1/filters/sync"
			c.json("PUT", base, map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": shards}, 201)
			c.json("POST", base+"/add", map[string]any{"keys": []string{"a", "b"}}, 200)
			status, body, h := c.do("GET", base+"/changes", "")
			if status != 200 || h.Get("X-Edgebloom-Cursor") == "" {
				t.Fatalf("GET /changes: %d, cursor %q", status, h.Get("X-Edgebloom-Cursor"))
			}
			cp, err := snapshot.Load(body, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			cur, _ := snapshot.ParseCursor(h.Get("X-Edgebloom-Cursor"))
			for round := range 4 {
				keys := make([]string, 50)
				for i := range keys {
					keys[i] = fmt.Sprintf("https://r%d.example/%d", round, i)
				}
				c.json("POST", base+"/add", map[string]any{"keys": keys}, 200)
				status, body, h := c.do("GET", base+"/changes?since="+url.QueryEscape(cur.Text()), "")
				if status != 200 || h.Get("X-Edgebloom-Format") != "delta" {
					t.Fatalf("round %d: %d %s", round, status, h.Get("X-Edgebloom-Format"))
				}
				if cur, err = snapshot.ApplyDelta(cp, cur, body); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if cur.Text() != h.Get("X-Edgebloom-Cursor") {
					t.Fatalf("round %d: cursor %s; the service says %s", round, cur.Text(), h.Get("X-Edgebloom-Cursor"))
				}
				_, snap, _ := c.do("GET", base+"/snapshot", "")
				if !bytes.Equal(encodeSet(t, cp), snap) {
					t.Fatalf("round %d: the copy is not the snapshot", round)
				}
				for _, k := range keys {
					if !cp.HasString(k) {
						t.Fatalf("round %d: %q missing from the copy", round, k)
					}
				}
			}
			_, body, h = c.do("GET", base+"/changes?since="+cur.Text(), "")
			if len(body) != 52 || h.Get("X-Edgebloom-Format") != "delta" {
				t.Errorf("nothing new: %d bytes, format %s; want a 52-byte delta", len(body), h.Get("X-Edgebloom-Format"))
			}
			// Another generation: the snapshot, saying why.
			c.do("DELETE", base, "")
			c.json("PUT", base, map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": shards}, 201)
			status, body, h = c.do("GET", base+"/changes?since="+cur.Text(), "")
			if status != 200 || h.Get("X-Edgebloom-Resync") != "generation" || h.Get("X-Edgebloom-Format") == "delta" {
				t.Fatalf("after a DELETE and PUT: %d, format %s, resync %q", status, h.Get("X-Edgebloom-Format"), h.Get("X-Edgebloom-Resync"))
			}
			if _, snap, _ := c.do("GET", base+"/snapshot", ""); !bytes.Equal(body, snap) {
				t.Fatal("the resync is not the snapshot")
			}
			if status, _, _ := c.do("GET", base+"/changes?since=nope!", ""); status != 400 {
				t.Fatalf("a cursor that is none: %d; want 400", status)
			}
		})
	}
}

// A shard that no longer holds what a cursor needs (here: the cursor names
// another epoch of its storage) comes whole inside the delta, while the
// others send their changes: the copy is the snapshot after it, and the
// answer says which shards came whole.
func TestChangesWholeShard(t *testing.T) {
	c, _ := newTestServer(t)
	base := "/v1/filters/mixed"
	c.json("PUT", base, map[string]any{"capacity": 30000, "errorRate": 0.01, "shards": 3}, 201)
	c.json("POST", base+"/add", map[string]any{"keys": []string{"a", "b", "c", "d"}}, 200)
	_, body, h := c.do("GET", base+"/changes", "")
	cp, err := snapshot.Load(body, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := snapshot.ParseCursor(h.Get("X-Edgebloom-Cursor"))
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://mixed.example/%d", i)
	}
	c.json("POST", base+"/add", map[string]any{"keys": keys}, 200)
	cur.Shards[1].Epoch++
	status, body, h := c.do("GET", base+"/changes?since="+cur.Text(), "")
	if status != 200 || h.Get("X-Edgebloom-Format") != "delta" || h.Get("X-Edgebloom-Whole-Shards") != "1" {
		t.Fatalf("GET /changes: %d, format %q, whole shards %q", status, h.Get("X-Edgebloom-Format"), h.Get("X-Edgebloom-Whole-Shards"))
	}
	next, err := snapshot.ApplyDelta(cp, cur, body)
	if err != nil {
		t.Fatal(err)
	}
	if next.Text() != h.Get("X-Edgebloom-Cursor") {
		t.Fatalf("cursor %s; the service says %s", next.Text(), h.Get("X-Edgebloom-Cursor"))
	}
	if _, snap, _ := c.do("GET", base+"/snapshot", ""); !bytes.Equal(encodeSet(t, cp), snap) {
		t.Fatal("the copy is not the snapshot")
	}
	// Every shard gone: the snapshot, saying why.
	for i := range cur.Shards {
		cur.Shards[i].Epoch += 7
	}
	if _, _, h := c.do("GET", base+"/changes?since="+cur.Text(), ""); h.Get("X-Edgebloom-Format") != "sharded" || h.Get("X-Edgebloom-Resync") != "gone" {
		t.Fatalf("every shard gone: format %q, resync %q", h.Get("X-Edgebloom-Format"), h.Get("X-Edgebloom-Resync"))
	}
}

func encodeSet(t *testing.T, s snapshot.Set) []byte {
	t.Helper()
	b, err := s.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A cursor the service cannot have written (a position past what a shard's
// log numbers, 2^53 - 1) is the client's error, 400 invalid_params naming
// the rule, never a shard's answer in words of the internal protocol.
func TestChangesCursorPastAnyPosition(t *testing.T) {
	c, _ := newTestServer(t)
	base := "/v1/filters/forged"
	c.json("PUT", base, map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	_, _, h := c.do("GET", base+"/changes", "")
	cur, err := snapshot.ParseCursor(h.Get("X-Edgebloom-Cursor"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pos := range []uint64{1 << 53, 1<<64 - 1} {
		cur.Shards[1].Position = pos
		status, body, _ := c.do("GET", base+"/changes?since="+cur.Text(), "")
		if status != 400 || !strings.Contains(string(body), `"invalid_params"`) || !strings.Contains(string(body), "since must be") {
			t.Errorf("position %d: %d %s; want 400 invalid_params", pos, status, body)
		}
	}
}
