//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// memoryObjects implements the internal protocol (see Objects) in Go, with
// the objects in memory. It stands in for the Durable Objects on the host:
// in the handler tests, and in "go run ./front" without wrangler. The JS
// class in shard.js is the real implementation; worker/test/protocol.json,
// run against both, keeps them answering alike.
type memoryObjects struct {
	mu     sync.Mutex
	meta   map[string]filterParams
	shards map[string]*memoryShard
	// last is the last generation each meta object gave out; it outlives
	// a DELETE, so that the next filter of the name gets a later one.
	last map[string]uint64
	// cleanup is, per name, the deleted generations whose shards may not
	// all have been told (see Objects).
	cleanup map[string]cleanup
	// floor is, per shard object, the newest generation deleted there:
	// requests of it or an older one are refused.
	floor map[string]uint64
	// fail, when set, makes Fetch fail for objects it returns true for.
	fail func(object string) bool
	// breakBody, when set, makes the body of an answer to a request it
	// returns true for fail half way through, as a stream from a Durable
	// Object that stops mid-answer does.
	breakBody func(object, path string) bool
}

type memoryShard struct {
	params shardParams
	filter *bloom.Filter
	// epoch and log: the positions each add set, row by row (row i is
	// position i+1). Nothing is compacted here: the whole log is the tail.
	epoch uint32
	log   [][]uint64
	// counts[i] is the filter's count after row i.
	counts []uint64
}

func newMemoryObjects() *memoryObjects {
	return &memoryObjects{
		meta: map[string]filterParams{}, shards: map[string]*memoryShard{},
		last: map[string]uint64{}, cleanup: map[string]cleanup{}, floor: map[string]uint64{},
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
		o.serveMeta(rec, name, method, path, body)
	} else if name, ok := strings.CutPrefix(object, "ckpt:"); ok {
		o.serveCheckpoints(rec, name, method, path, body)
	} else {
		o.serveShard(rec, object, method, path, header, body)
	}
	res := rec.Result()
	if o.breakBody != nil && o.breakBody(object, path) {
		res.Body = &brokenBody{r: res.Body, left: rec.Body.Len() / 2}
	}
	return res, nil
}

// brokenBody reads left bytes of r, then fails.
type brokenBody struct {
	r    io.ReadCloser
	left int
}

func (b *brokenBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, errors.New("memory: the object's answer broke off")
	}
	n, err := b.r.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

func (b *brokenBody) Close() error { return b.r.Close() }

func (o *memoryObjects) serveMeta(w http.ResponseWriter, name, method, path string, body []byte) {
	p, exists := o.meta[name]
	var pending *cleanup
	if c, ok := o.cleanup[name]; ok {
		pending = &c
	}
	notFound := func() {
		answer := map[string]any{"error": map[string]string{"code": "not_found", "message": fmt.Sprintf("no filter named %q", name)}}
		if pending != nil {
			answer["cleanup"] = pending
		}
		writeJSON(w, 404, answer)
	}
	if path == "/cleanup" {
		if method != "POST" {
			writeError(w, "", errorf(405, "method_not_allowed", "meta: POST /cleanup"))
			return
		}
		var done cleanup
		if err := json.Unmarshal(body, &done); err != nil || done.Generation == 0 || done.Shards < 1 {
			writeError(w, "", errorf(400, "bad_meta_request", "POST /cleanup takes {\"generation\", \"shards\"}"))
			return
		}
		if pending != nil && pending.Generation <= done.Generation && pending.Shards <= done.Shards {
			delete(o.cleanup, name)
		}
		w.WriteHeader(204)
		return
	}
	switch method {
	case "GET":
		if !exists {
			notFound()
			return
		}
		writeJSON(w, 200, metaAnswer{p, pending})
	case "DELETE":
		if !exists {
			notFound()
			return
		}
		delete(o.meta, name)
		c := cleanup{Generation: p.Generation, Shards: p.Shards}
		if pending != nil {
			c = cleanup{Generation: max(c.Generation, pending.Generation), Shards: max(c.Shards, pending.Shards)}
		}
		o.cleanup[name] = c
		writeJSON(w, 200, metaAnswer{p, &c})
	case "PUT":
		var want filterParams
		if err := json.Unmarshal(body, &want); err != nil {
			writeError(w, "", errorf(400, "bad_meta_request", "PUT /meta takes {\"capacity\", \"errorRate\", \"shards\", \"canonicalize\"}: %v", err))
			return
		}
		if exists {
			if p.Capacity != want.Capacity || p.ErrorRate != want.ErrorRate || p.Shards != want.Shards || p.Canonicalize != want.Canonicalize {
				writeError(w, "", errorf(409, "conflict", "filter %q exists with other parameters", name))
				return
			}
			writeJSON(w, 200, metaAnswer{p, pending})
			return
		}
		o.last[name] = max(o.last[name]+1, uint64(time.Now().UnixMilli()))
		want.Generation = o.last[name]
		o.meta[name] = want
		writeJSON(w, 201, metaAnswer{want, pending})
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
	// The body is read before anything changes: a request refused
	// changes nothing.
	path, query, _ := strings.Cut(path, "?")
	var keys []string
	if path == "/add" || path == "/check" {
		var req struct{ Keys *[]string }
		if err := json.Unmarshal(body, &req); err != nil || req.Keys == nil {
			writeError(w, "", errorf(400, "bad_shard_request", "%s %s takes {\"keys\": [string, ...]}", method, path))
			return
		}
		keys = *req.Keys
	}
	if sh == nil || have != p.Generation {
		f, err := bloom.New(p.Capacity, p.ErrorRate)
		if err != nil {
			writeError(w, "", errorf(400, "invalid_params", "%v", err))
			return
		}
		sh = &memoryShard{params: p, filter: f, epoch: 1 + rand.Uint32N(1<<32-2)}
		o.shards[object] = sh
	}
	f := sh.filter
	switch path {
	case "/add", "/check":
		out := make([]bool, len(keys))
		var row []uint64 // one log row an add that set bits, as shard.js writes
		for i, k := range keys {
			if path == "/add" {
				row, out[i] = f.AddChanges([]byte(k), row)
			} else {
				out[i] = f.HasString(k)
			}
		}
		if len(row) > 0 {
			sh.log = append(sh.log, row)
			sh.counts = append(sh.counts, f.Count())
		}
		w.Header().Set(resultsHeader, string(appendResultsHex(nil, out)))
		w.WriteHeader(200)
	case "/merge":
		sh.merge(w, header, body)
	case "/stats":
		est := f.EstimatedCount()
		writeJSON(w, 200, shardStats{
			Bits: f.NumBits(), Hashes: f.NumHashes(), Count: f.Count(), SetBits: f.SetBits(),
			EstimatedCount: &est, FillRatio: f.FillRatio(), EstimatedErrorRate: f.EstimatedFPR(), ByteLength: f.EncodedSize(),
		})
	case "/snapshot":
		b, err := f.MarshalBinary()
		if err != nil {
			writeError(w, "", internalError(500, "internal", "encoding the shard failed", err))
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, bytes.NewReader(b))
	case "/position":
		writeJSON(w, 200, map[string]uint64{"epoch": uint64(sh.epoch), "position": uint64(len(sh.log))})
	case "/changes":
		q, _ := url.ParseQuery(query)
		since, err1 := strconv.ParseUint(q.Get("since"), 10, 64)
		epoch, err2 := strconv.ParseUint(q.Get("epoch"), 10, 32)
		if err1 != nil || err2 != nil {
			writeError(w, "", errorf(400, "bad_shard_request", "GET /changes takes ?since=POSITION&epoch=EPOCH"))
			return
		}
		gone := func() {
			w.Header().Set(positionHeader, sh.position())
			writeError(w, "", errorf(410, "changes_gone", "the shard is at %s and no longer holds the changes since %d:%d", sh.position(), epoch, since))
		}
		to, count := uint64(len(sh.log)), f.Count()
		if q.Has("to") {
			var err error
			if to, err = strconv.ParseUint(q.Get("to"), 10, 64); err != nil || to > uint64(len(sh.log)) {
				gone()
				return
			}
			if to > 0 {
				count = sh.counts[to-1]
			}
		}
		if uint32(epoch) != sh.epoch || since > to {
			gone()
			return
		}
		var rec []byte
		if since < to {
			var pos []uint64
			for _, row := range sh.log[since:to] {
				pos = append(pos, row...)
			}
			rec = snapshot.AppendDeltaRecord(nil, snapshot.DeltaRecord{
				Shard: uint32(p.Index), Epoch: sh.epoch, From: since, To: to, Count: count, Positions: pos,
			})
		}
		// The record's body past the limit: the shard whole is the better deal.
		if len(rec) > abi.DeltaRecordHeader+abi.DeltaLimit(int(f.PayloadSize())) {
			gone()
			return
		}
		w.Header().Set(positionHeader, strconv.FormatUint(uint64(sh.epoch), 10)+":"+strconv.FormatUint(to, 10))
		w.Write(rec)
	default:
		writeError(w, "", errorf(404, "not_found", "no such shard endpoint"))
	}
}

func (sh *memoryShard) position() string {
	return strconv.FormatUint(uint64(sh.epoch), 10) + ":" + strconv.Itoa(len(sh.log))
}

// setFail sets fail under the lock, for tests that change it while other
// requests may be in flight.
func (o *memoryObjects) setFail(fail func(object string) bool) {
	o.mu.Lock()
	o.fail = fail
	o.mu.Unlock()
}
