package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// MaxMergePositions is the most positions one merge sets.
const MaxMergePositions = 1 << 20

// A MergeResult is what a Merge did (POST /v1/filters/{name}/merge).
type MergeResult struct {
	// Generation is the filter's: give it in the next deltas' headers, so
	// that a filter deleted and made again meanwhile refuses them
	// (ErrConflict) instead of taking part of the bits.
	Generation uint64 `json:"generation"`
	// Set counts the positions that were not set before, over every shard.
	Set    uint64       `json:"set"`
	Shards []MergeShard `json:"shards"`
}

// A MergeShard is what a merge did to one shard.
type MergeShard struct {
	Index     uint32 `json:"index"`
	Positions int    `json:"positions"` // the positions the delta gave it
	Set       uint64 `json:"set"`       // those that were new
}

// Merge ORs the bits of delta into the filter name: a delta of version 2
// (docs/format.md, "Deltas"; snapshot.EncodeDelta makes one) whose header
// gives the filter's shards, bits a shard, hashes and seed 0, and its
// generation or 0, with one record of positions a shard it sets
// (worker/README.md, "Publishing a filter built offline"). It needs the
// secret or a write token. The service checks it whole before any shard is
// asked: a delta of other parameters or another generation is ErrConflict,
// a malformed one 400 invalid_delta. A merge sent again after a lost answer
// sets nothing more, so it is retried as an add is; its Set then counts
// only what the last attempt set. delta may be at most MaxBodyBytes, with
// at most MaxMergePositions positions.
func (c *Client) Merge(ctx context.Context, name string, delta []byte) (*MergeResult, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if len(delta) == 0 || len(delta) > MaxBodyBytes {
		return nil, fmt.Errorf("client: Merge: a delta of %d bytes; it must be 1 to %d", len(delta), MaxBodyBytes)
	}
	var m MergeResult
	err := c.exchange(ctx, http.MethodPost, filterPath(name, "/merge"), "", "application/octet-stream", delta, nil, func(res *http.Response) error {
		return json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&m)
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}
