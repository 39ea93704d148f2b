package main

import (
	"context"
	"net/http"
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
//	object "shard:{name}:{index}", one shard; header X-Edgebloom-Shard carries
//	its shardParams as JSON:
//	  POST   /add      {"keys": [...]} → {"added": [...]}
//	  POST   /check    {"keys": [...]} → {"present": [...]}
//	  GET    /stats    → shardStats
//	  GET    /snapshot → the shard's filter in the plain binary format
//	  GET    /position → {"epoch", "position"}: the epoch of the shard's
//	                     storage (random, drawn when it is made) and the
//	                     last row of its log (rows count 1, 2, 3, ...)
//	  GET    /changes?since=P&epoch=E → binary: the shard's record of a
//	                     delta (docs/format.md, "Deltas") from position P,
//	                     empty when nothing is new, with X-Edgebloom-Position;
//	                     410 changes_gone when the shard no longer holds the
//	                     rows after P of epoch E (see README.md, "Keeping a
//	                     local copy in sync")
//	  DELETE /shard    → 204
//
// A generation is a positive integer that only grows: each filter made under
// a name gets a later one than every filter of the name before it (the meta
// object keeps the last it gave out across a DELETE, and starts no lower
// than the time in ms). A shard serves the generation it holds; a request of
// a newer one discards what it held and starts the new filter; a request of
// an older one, or of one deleted there, is refused with 409
// stale_generation and changes nothing. A DELETE /shard of the shard's
// generation or a newer one empties it and remembers the generation as
// deleted; of an older one it is refused the same way.
//
// Errors come back as {"error": {"code", "message"}} and the front passes
// them on with their status. test/protocol.json gives the protocol as steps
// and answers; protocol_test.go runs it against memory.go and
// test/worker.test.js against shard.js in workerd.
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

func metaObject(name string) string             { return "meta:" + name }
func shardObject(name string, index int) string { return "shard:" + name + ":" + itoa(index) }
