//go:build !(js && wasm)

// The in-memory objects refuse a request body they cannot read, as the
// front's own request would be refused, instead of acting on zero values.

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

func TestMemoryObjectsRefuseBadBodies(t *testing.T) {
	shard := func() http.Header {
		b, _ := json.Marshal(shardParams{Filter: "f", Index: 0, Capacity: 1000, ErrorRate: 0.01, Generation: 1})
		return http.Header{shardHeader: {string(b)}}
	}
	tests := []struct {
		name, object, method, path, body string
		header                           http.Header
		code                             string
	}{
		{"meta PUT, not JSON", "meta:f", "PUT", "/meta", `{"capacity": 1000,`, nil, "bad_meta_request"},
		{"meta PUT, a string capacity", "meta:f", "PUT", "/meta", `{"capacity": "1000", "errorRate": 0.01, "shards": 1}`, nil, "bad_meta_request"},
		{"meta PUT, an array", "meta:f", "PUT", "/meta", `[1000, 0.01, 1]`, nil, "bad_meta_request"},
		{"shard add, not JSON", "shard:f:0", "POST", "/add", `{"keys": ["a"`, shard(), "bad_shard_request"},
		{"shard add, keys a number", "shard:f:0", "POST", "/add", `{"keys": 5}`, shard(), "bad_shard_request"},
		{"shard add, no keys", "shard:f:0", "POST", "/add", `{}`, shard(), "bad_shard_request"},
		{"shard check, keys of numbers", "shard:f:0", "POST", "/check", `{"keys": [1, 2]}`, shard(), "bad_shard_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newMemoryObjects()
			status, code := fetch(t, o, tt.object, tt.method, tt.path, tt.header, tt.body)
			if status != http.StatusBadRequest || code != tt.code {
				t.Errorf("%s %s %s: got %d %q; want 400 %q", tt.object, tt.method, tt.path, status, code, tt.code)
			}
			// Nothing was made of the bad request.
			if status, _ := fetch(t, o, "meta:f", "GET", "/meta", nil, ""); status != http.StatusNotFound {
				t.Errorf("GET /meta after it: got %d; want 404", status)
			}
			if len(o.shards) != 0 {
				t.Errorf("shards after it: %d; want none", len(o.shards))
			}
		})
	}
}

// fetch sends one request to o and returns the status and the error code.
func fetch(t *testing.T, o *memoryObjects, object, method, path string, header http.Header, body string) (int, string) {
	t.Helper()
	res, err := o.Fetch(context.Background(), object, method, path, header, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e)
	return res.StatusCode, e.Error.Code
}
