// PUT and DELETE of a filter: making it (its parameters checked here, kept
// by its meta object) and deleting it. Both go through metaCall, so that
// neither is answered before every shard of a deleted generation of the
// name refuses it (see objects.go).

package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
)

func (s *Server) create(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	var req struct {
		Capacity     *jsonInt `json:"capacity"`
		ErrorRate    *float64 `json:"errorRate"`
		Shards       *jsonInt `json:"shards"`
		Canonicalize bool     `json:"canonicalize"`
	}
	if err := readJSON(r, &req, createShape); err != nil {
		return err
	}
	p, err := validParams(req.Capacity.float(), req.ErrorRate, req.Shards.float())
	if err != nil {
		return err
	}
	p.Canonicalize = req.Canonicalize
	body, _ := json.Marshal(p)
	// Answered only once every shard of a deleted generation of the name
	// refuses it (metaCall): no late request of an older filter is
	// acknowledged after this one is.
	read := time.Now()
	status, got, _, err := s.metaCall(ctx, name, "PUT", body)
	if err != nil {
		return err
	}
	s.remember(name, got, read)
	return describe(w, status, name, got)
}

func validParams(capacity, errorRate, shards *float64) (filterParams, error) {
	bad := func(format string, args ...any) (filterParams, error) {
		return filterParams{}, errorf(http.StatusBadRequest, "invalid_params", format, args...)
	}
	n := 1.0
	if shards != nil {
		n = *shards
	}
	switch {
	// A NaN (a count not written as an integer: jsonInt) fails each check.
	case capacity == nil || !(*capacity >= 1 && *capacity <= 1<<53) || *capacity != math.Trunc(*capacity):
		return bad(`"capacity" must be an integer from 1 to 2^53`)
	case errorRate == nil || !(*errorRate > 0 && *errorRate < 1):
		return bad(`"errorRate" must be a number between 0 and 1 (exclusive)`)
	case !(n >= 1 && n <= maxShards) || n != math.Trunc(n):
		return bad(`"shards" must be an integer from 1 to %d`, maxShards)
	}
	p := filterParams{Capacity: uint64(*capacity), ErrorRate: *errorRate, Shards: int(n)}
	m, _, err := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	if err != nil {
		return bad("%v", err)
	}
	if m > maxShardBits {
		need := (float64(m)*float64(p.Shards) + maxShardBits - 1) / maxShardBits
		return bad("each of %d shards would need %d bits, more than the %d a shard may hold; use at least %d shards", p.Shards, m, maxShardBits, int(need))
	}
	return p, nil
}

// describe writes a filter's parameters and per-shard sizes.
func describe(w http.ResponseWriter, status int, name string, p filterParams) error {
	m, k, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	writeJSON(w, status, map[string]any{
		"name": name, "capacity": p.Capacity, "errorRate": p.ErrorRate, "shards": p.Shards, "canonicalize": p.Canonicalize,
		"shardCapacity": shardCapacity(p), "shardBits": m, "hashes": k, "bits": m * uint64(p.Shards),
	})
	return nil
}

func (s *Server) remove(ctx context.Context, w http.ResponseWriter, name string) error {
	s.forget(name, 0)
	// Meta forgets the parameters and answers them with the clean-up,
	// which metaCall does: each shard of this generation (and of any
	// deleted one whose clean-up is not known to be done) is told, so that
	// it refuses every later request of it. A DELETE that failed part way
	// and is sent again finds no filter but the clean-up, finishes it and
	// answers 204.
	status, gone, done, err := s.metaCall(ctx, name, "DELETE", nil)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound && done == nil {
		return errorf(http.StatusNotFound, "not_found", "no filter named %q", name)
	}
	// No read of meta begun before it brings the deleted generation back
	// into this front's cache, nor its cached answers (checkpoint_cache.go).
	deleted := gone.Generation
	if done != nil {
		deleted = max(deleted, done.Generation)
	}
	s.forget(name, deleted)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
