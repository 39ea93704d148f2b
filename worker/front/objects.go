// The internal protocol between the front and the Durable Objects (the
// meta object and the shards of each filter), and the front's side of it:
// call sends one request, decodeResponse and objectError read the answer.
// The protocol is written down once, on Objects, because two
// implementations answer it: shard.js in workerd and memory.go on the host.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/edgebloom/edgebloom/snapshot"
)

// Objects sends one request to the Durable Object of the given name and
// returns its response. In workerd it is the SHARDS namespace binding
// (env_js.go); on the host, an in-memory stand-in (memory.go).
//
// The requests the front sends, all with JSON bodies and answers unless
// said otherwise, are its internal protocol with the JS class in shard.js:
//
//	object "meta:{name}", the filter's parameters:
//	  PUT    /meta   {"capacity","errorRate","shards","canonicalize"} → 201 created, 200 same, 409 different
//	  GET    /meta   → 200 {"capacity","errorRate","shards","canonicalize","generation"}, 404 unknown
//	  DELETE /meta   → 200 the deleted parameters, 404 unknown
//	  POST   /cleanup {"generation","shards"} → 204: the shards named are told
//	                 (below)
//	  Every 200, 201 and 404 of meta carries "cleanup": {"generation",
//	  "shards"} while a deleted generation's shards may not all have been
//	  told of the DELETE (a 404 beside its "error").
//	object "shard:{name}:{index}", one shard; header X-Edgebloom-Shard carries
//	its shardParams as JSON:
//	  POST   /add      {"keys": [...]} → 200, no body; the answers in X-Edgebloom-Results
//	  POST   /check    {"keys": [...]} → 200, no body; the answers in X-Edgebloom-Results
//	                     (one hex digit for every four keys, key 4i+j in bit
//	                     1<<j of digit i: whether it was new, or is present).
//	                     In workerd an answer's body costs the round trip as
//	                     much again as its head; the hot requests have none.
//	                     A 200 with the JSON {"added"|"present": [...]} and no
//	                     such header (what shards answered before) is read too.
//	  POST   /merge    positions, uint32 little-endian, increasing; header
//	                     X-Edgebloom-Count: what to add to the count → 200
//	                     {"set": n}: the positions not set before are set and
//	                     logged as an add's; the count grows only when n > 0
//	                     (merge.go)
//	  GET    /stats    → shardStats
//	  GET    /snapshot → the shard's filter in the plain binary format
//	  GET    /position → {"epoch", "position"}: the epoch of the shard's
//	                     storage (random, drawn when it is made) and the
//	                     last row of its log (rows count 1, 2, 3, ...)
//	  GET    /changes?since=P&epoch=E[&to=Q] → binary: the shard's record
//	                     of a delta (docs/format.md, "Deltas") from position
//	                     P to Q (default: the last row), with the count after
//	                     row Q, empty when P is Q, with X-Edgebloom-Position
//	                     E:Q;
//	                     410 changes_gone when the shard no longer holds the
//	                     rows after P of epoch E (see worker/DESIGN.md,
//	                     "Local copies")
//	  DELETE /shard    → 204
//	object "ckpt:{name}", the filter's checkpoints (shard/checkpoint-object.js,
//	checkpoints.go):
//	  GET    /checkpoints?generation=G&interval=MS → {"generation",
//	                     "checkpoints": [{"n", "cursor", "time"}], "due"}:
//	                     due for one caller at a time (a 10 s lease) once MS
//	                     passed since the last check
//	  POST   /checkpoints {"generation", "after", "cursor"} → the same:
//	                     cursor becomes checkpoint after+1 if after is the
//	                     newest and cursor differs from it
//	  409 stale_generation for an older generation; a newer one starts an
//	  empty list. The last 64 checkpoints are kept.
//
// A generation is a positive integer that only grows: each filter made under
// a name gets a later one than every filter of the name before it (the meta
// object keeps the last it gave out across a DELETE, and starts no lower
// than the time in ms). A shard serves the generation it holds; a request of
// a newer one discards what it held and starts the new filter; a request of
// an older one, or of one deleted there, is refused with 409
// stale_generation and changes nothing. A DELETE /shard of the shard's
// generation or a newer one empties it and remembers the generation as
// deleted (its floor); of an older one it is refused the same way.
//
// Deleting a filter takes two steps that cannot be one transaction: meta
// forgets the parameters, then each shard is told (DELETE /shard). Until
// every shard has been, a front that cached the old parameters could still
// have an add acknowledged by a shard that holds the old generation, which
// the first request of a newer one would then wipe. So meta keeps, beside
// the parameters, the clean-up that is not known to be done: the newest
// deleted generation and the most shards any deleted generation since the
// last finished clean-up had (a shard told of generation g refuses every
// generation up to g). DELETE /meta adds the deleted generation to it. A
// front that gets an answer of meta with a clean-up does it before it uses
// the answer: DELETE /shard of that generation to shards 0 to shards-1
// (idempotent; a shard that holds a newer generation refuses, and has moved
// on), then POST /cleanup with what it did, which clears the clean-up
// unless a newer DELETE widened it meanwhile. Any front does it, so a
// DELETE whose own clean-up was delayed or failed part way is finished by
// the next DELETE, PUT or read of meta; and since a PUT is answered only
// after that, once a PUT is acknowledged every shard any earlier generation
// of the name had refuses that generation, beyond the new shard count too.
// A stale front's request then costs one retry, never data.
//
// Errors come back as {"error": {"code", "message"}} and the front passes
// them on with their status. worker/test/protocol.json gives the protocol
// as steps and answers; protocol_test.go runs it against memory.go and
// worker/test/worker.test.js against shard.js in workerd.
type Objects interface {
	Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error)
}

// shardParams is what a shard needs to make or check its filter.
type shardParams struct {
	Filter     string  `json:"filter"`
	Index      int     `json:"index"`
	Capacity   uint64  `json:"capacity"`
	ErrorRate  float64 `json:"errorRate"`
	Generation uint64  `json:"generation"`
}

// filterParams are a filter's parameters as the meta object keeps them.
type filterParams struct {
	Capacity  uint64  `json:"capacity"`
	ErrorRate float64 `json:"errorRate"`
	Shards    int     `json:"shards"`
	// Canonicalize makes the front map keys to canonical URLs (package
	// urlkey) before routing them; absent (false) in filters made before.
	Canonicalize bool   `json:"canonicalize,omitempty"`
	Generation   uint64 `json:"generation,omitempty"`
}

// cleanup is a clean-up of deleted generations that the meta object keeps
// until a front says it is done: every shard below Shards is to be told of
// the deletion of Generation (see Objects).
type cleanup struct {
	Generation uint64 `json:"generation"`
	Shards     int    `json:"shards"`
}

// metaAnswer is what the meta object answers: the parameters, and the
// clean-up still to do, if any.
type metaAnswer struct {
	filterParams
	Cleanup *cleanup `json:"cleanup,omitempty"`
}

// shardStats is what GET /stats of a shard returns.
type shardStats struct {
	Bits               uint64   `json:"bits"`
	Hashes             uint32   `json:"hashes"`
	Count              uint64   `json:"count"`
	SetBits            uint64   `json:"setBits"`
	EstimatedCount     *float64 `json:"estimatedCount"` // null when every bit is set
	FillRatio          float64  `json:"fillRatio"`
	EstimatedErrorRate float64  `json:"estimatedErrorRate"`
	ByteLength         uint64   `json:"byteLength"`
}

const shardHeader = "X-Edgebloom-Shard"

// resultsHeader carries a shard's answers to an add or a check.
const resultsHeader = "X-Edgebloom-Results"

// appendResultsHex appends the digits of resultsHeader for results.
func appendResultsHex(b []byte, results []bool) []byte {
	for i := 0; i < len(results); i += 4 {
		var d byte
		for j := 0; j < 4 && i+j < len(results); j++ {
			if results[i+j] {
				d |= 1 << j
			}
		}
		b = append(b, "0123456789abcdef"[d])
	}
	return b
}

// parseResultsHex reads the n answers of resultsHeader's digits s: false
// when s is not exactly n answers.
func parseResultsHex(s string, n int) ([]bool, bool) {
	if len(s) != (n+3)/4 {
		return nil, false
	}
	out := make([]bool, n)
	for i := 0; i < len(s); i++ {
		var d byte
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return nil, false
		}
		for j := range 4 {
			k := 4*i + j
			if k == n {
				// The bits past the last key are zero.
				return out, d>>j == 0
			}
			out[k] = d&(1<<j) != 0
		}
	}
	return out, true
}

// shardAnswers returns the n answers of a shard's add or check (field is
// "added" or "present"), or the error the shard answered with.
func shardAnswers(res *http.Response, field string, n int) ([]bool, error) {
	if hex, ok := res.Header[resultsHeader]; ok && len(hex) == 1 && res.StatusCode == http.StatusOK {
		res.Body.Close()
		got, ok := parseResultsHex(hex[0], n)
		if !ok {
			return nil, errorf(http.StatusBadGateway, "shard_protocol", "a shard answered %q for %d keys", hex, n)
		}
		return got, nil
	}
	out := shardResults{field: field}
	if err := decodeResponse(res, &out); err != nil {
		return nil, err
	}
	if len(out.got) != n {
		return nil, errorf(http.StatusBadGateway, "shard_protocol", "a shard answered %d results for %d keys", len(out.got), n)
	}
	return out.got, nil
}

func metaObject(name string) string             { return "meta:" + name }
func shardObject(name string, index int) string { return "shard:" + name + ":" + itoa(index) }

// shardCapacity is the capacity of each shard: the filter's, split evenly
// (snapshot.ShardCapacity, which snapshot.NewSharded and the npm module's
// ShardedBloomFilter use too).
func shardCapacity(p filterParams) uint64 {
	return snapshot.ShardCapacity(p.Capacity, p.Shards)
}

// shardParamsOf returns the X-Edgebloom-Shard header of shard i.
func shardParamsOf(name string, p filterParams, i int) http.Header {
	b, _ := json.Marshal(shardParams{Filter: name, Index: i, Capacity: shardCapacity(p), ErrorRate: p.ErrorRate, Generation: p.Generation})
	return http.Header{shardHeader: {string(b)}, "Content-Type": {"application/json"}}
}

// call sends one internal request and turns transport failures into 502.
func (s *Server) call(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if header == nil {
		header = http.Header{}
	}
	if body != nil {
		header.Set("Content-Type", "application/json")
	}
	if id := requestID(ctx); id != "" {
		header.Set(requestIDHeader, id)
	}
	res, err := s.Objects.Fetch(ctx, object, method, path, header, body)
	if err != nil {
		return nil, internalError(http.StatusBadGateway, "shard_unavailable", "the Durable Object "+object+" could not be reached", err)
	}
	return res, nil
}

// decodeResponse decodes a 2xx JSON answer into v, or returns the error the
// object answered with.
func decodeResponse(res *http.Response, v any) error {
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return internalError(http.StatusBadGateway, "shard_unavailable", "reading an internal response failed", err)
	}
	if res.StatusCode >= 300 {
		return objectError(res.StatusCode, body)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return internalError(http.StatusBadGateway, "shard_protocol", "an internal response is not the expected JSON", err)
	}
	return nil
}

func objectError(status int, body []byte) error {
	var e struct {
		Error *struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("an internal request failed with status %d", status),
			fmt.Errorf("%.500s", body))
	}
	return errorf(status, e.Error.Code, "%s", e.Error.Message)
}

func itoa(i int) string { return strconv.Itoa(i) }
