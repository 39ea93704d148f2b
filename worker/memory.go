//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
)

// memoryObjects implements the internal protocol (see Objects) in Go, with
// the objects in memory. It stands in for the Durable Objects on the host:
// in the handler tests, and in "go run ." without wrangler. The JS class in
// shard.js is the real implementation; test/protocol.json, run against
// both, keeps them answering alike.
type memoryObjects struct {
	mu     sync.Mutex
	meta   map[string]filterParams
	shards map[string]*memoryShard
	// last is the last generation each meta object gave out; it outlives
	// a DELETE, so that the next filter of the name gets a later one.
	last map[string]uint64
	// floor is, per shard object, the newest generation deleted there:
	// requests of it or an older one are refused.
	floor map[string]uint64
	// fail, when set, makes Fetch fail for objects it returns true for.
	fail func(object string) bool
}

type memoryShard struct {
	params shardParams
	filter *bloom.Filter
}

func newMemoryObjects() *memoryObjects {
	return &memoryObjects{
		meta: map[string]filterParams{}, shards: map[string]*memoryShard{},
		last: map[string]uint64{}, floor: map[string]uint64{},
	}
}

func (o *memoryObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail != nil && o.fail(object) {
		return nil, io.ErrUnexpectedEOF
	}
	rec := httptest.NewRecorder()
	if name, ok := strings.CutPrefix(object, "meta:"); ok {
		o.serveMeta(rec, name, method, body)
	} else {
		o.serveShard(rec, object, method, path, header, body)
	}
	return rec.Result(), nil
}

func (o *memoryObjects) serveMeta(w http.ResponseWriter, name, method string, body []byte) {
	p, exists := o.meta[name]
	switch method {
	case "GET":
		if !exists {
			writeError(w, "", errorf(404, "not_found", "no filter named %q", name))
			return
		}
		writeJSON(w, 200, p)
	case "DELETE":
		if !exists {
			writeError(w, "", errorf(404, "not_found", "no filter named %q", name))
			return
		}
		delete(o.meta, name)
		writeJSON(w, 200, p)
	case "PUT":
		var want filterParams
		json.Unmarshal(body, &want)
		if exists {
			if p.Capacity != want.Capacity || p.ErrorRate != want.ErrorRate || p.Shards != want.Shards || p.Canonicalize != want.Canonicalize {
				writeError(w, "", errorf(409, "conflict", "filter %q exists with other parameters", name))
				return
			}
			writeJSON(w, 200, p)
			return
		}
		o.last[name] = max(o.last[name]+1, uint64(time.Now().UnixMilli()))
		want.Generation = o.last[name]
		o.meta[name] = want
		writeJSON(w, 201, want)
	default:
		writeError(w, "", errorf(405, "method_not_allowed", "meta: PUT, GET or DELETE"))
	}
}

func (o *memoryObjects) serveShard(w http.ResponseWriter, object, method, path string, header http.Header, body []byte) {
	var p shardParams
	if err := json.Unmarshal([]byte(header.Get(shardHeader)), &p); err != nil {
		writeError(w, "", errorf(400, "bad_shard_request", "missing %s", shardHeader))
		return
	}
	if p.Generation == 0 {
		writeError(w, "", errorf(400, "bad_shard_request", "%s has no generation", shardHeader))
		return
	}
	sh := o.shards[object]
	have := uint64(0)
	if sh != nil {
		have = sh.params.Generation
	}
	if method == "DELETE" && p.Generation >= have {
		delete(o.shards, object)
		o.floor[object] = max(o.floor[object], p.Generation)
		w.WriteHeader(204)
		return
	}
	if p.Generation < have || p.Generation <= o.floor[object] {
		writeError(w, "", errorf(409, staleGeneration, "the shard holds generation %d (deleted up to %d); the request is of generation %d",
			have, o.floor[object], p.Generation))
		return
	}
	if sh == nil || have != p.Generation {
		f, err := bloom.New(p.Capacity, p.ErrorRate)
		if err != nil {
			writeError(w, "", errorf(400, "invalid_params", "%v", err))
			return
		}
		sh = &memoryShard{params: p, filter: f}
		o.shards[object] = sh
	}
	f := sh.filter
	switch path {
	case "/add", "/check":
		var req struct{ Keys []string }
		json.Unmarshal(body, &req)
		out := make([]bool, len(req.Keys))
		for i, k := range req.Keys {
			if path == "/add" {
				out[i] = f.AddString(k)
			} else {
				out[i] = f.HasString(k)
			}
		}
		writeJSON(w, 200, map[string][]bool{map[string]string{"/add": "added", "/check": "present"}[path]: out})
	case "/stats":
		est := f.EstimatedCount()
		writeJSON(w, 200, shardStats{
			Bits: f.NumBits(), Hashes: f.NumHashes(), Count: f.Count(), SetBits: f.SetBits(),
			EstimatedCount: &est, FillRatio: f.FillRatio(), EstimatedErrorRate: f.EstimatedFPR(), ByteLength: f.EncodedSize(),
		})
	case "/snapshot":
		b, _ := f.MarshalBinary()
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, bytes.NewReader(b))
	default:
		writeError(w, "", errorf(404, "not_found", "no such shard endpoint"))
	}
}
