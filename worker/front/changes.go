// GET changes: what a local copy of a filter needs to catch up. From a
// cursor it gets a delta, the bits set since (small while the copy keeps
// up); without one, or when the shards no longer hold what its cursor
// needs, or the filter was made again, the whole snapshot and a cursor
// for next time. The protocol behind it is /position and /changes of each
// shard (objects.go).

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// positionHeader carries a shard's "epoch:position" on its snapshot and
// changes answers.
const positionHeader = "X-Edgebloom-Position"

// maxShardRecord bounds what the front reads of one shard's changes.
const maxShardRecord = abi.MaxShardRecord

// changes answers GET /v1/filters/{name}/changes: without since, the
// snapshot and the cursor of what it holds; with since=CURSOR, a delta
// from that cursor (docs/format.md, "Deltas"), or the snapshot again when
// the shards no longer hold what the cursor needs. See worker/README.md,
// "Keeping a local copy in sync".
func (s *Server) changes(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	var since *snapshot.Cursor
	if q := r.URL.Query(); q.Has("since") {
		c, err := snapshot.ParseCursor(q.Get("since"))
		if err != nil {
			return errorf(http.StatusBadRequest, "invalid_params", "since must be the X-Edgebloom-Cursor of an earlier answer (%v)", err)
		}
		since = &c
	}
	leave, err := s.enterHeavy(ctx, name, func(p filterParams) int64 {
		// The shards' records, or the snapshot they are replaced by.
		return max(snapshotWeight(p), deltaWeight(p, 1))
	})
	if err != nil {
		return err
	}
	defer leave()
	var (
		p      filterParams
		parts  [][]byte
		next   snapshot.Cursor
		resync string
		first  io.ReadCloser
	)
	err = s.withParams(ctx, name, func(q filterParams) error {
		p, resync = q, ""
		if since != nil && (since.Generation != p.Generation || len(since.Shards) != p.Shards) {
			resync = "generation"
		}
		if since != nil && resync == "" {
			var err error
			parts, next, err = s.shardChanges(ctx, name, p, *since)
			if err != nil || parts != nil {
				return err
			}
			resync = "gone"
		}
		// The snapshot: each shard's position first, then the shards. A
		// shard may move on in between, so the cursor may be behind the
		// snapshot, never ahead: the next delta sets again some bits the
		// copy has, which changes nothing, and gives the count of then.
		positions, err := s.positions(ctx, name, p)
		if err != nil {
			return err
		}
		next = snapshot.Cursor{Generation: p.Generation, Shards: positions}
		first, err = s.shardSnapshot(ctx, name, p, 0)
		return err
	})
	if err != nil {
		return err
	}
	h := w.Header()
	// No Cache-Control: a shared cache stores no answer to a request with
	// Authorization (RFC 9111 §3.5), and the header would be 24 of the
	// bytes of every idle sync.
	h.Set("X-Edgebloom-Cursor", next.Text())
	if first != nil {
		if resync != "" {
			// Why a copy that asked for a delta gets the snapshot.
			h.Set("X-Edgebloom-Resync", resync)
		}
		return s.writeSnapshot(ctx, w, name, p, first)
	}
	out := assembleDelta(p, parts)
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Edgebloom-Format", "delta")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
	return nil
}

// shardChanges asks every shard for its record of a delta from since. It
// returns the records (empty for a shard with nothing new) and the cursor
// after them, or nil records when a shard no longer holds what since
// needs.
func (s *Server) shardChanges(ctx context.Context, name string, p filterParams, since snapshot.Cursor) ([][]byte, snapshot.Cursor, error) {
	parts := make([][]byte, p.Shards)
	next := snapshot.Cursor{Generation: p.Generation, Shards: make([]snapshot.ShardPosition, p.Shards)}
	gone := make([]bool, p.Shards)
	err := fanOut(p.Shards, func(i int) error {
		at := since.Shards[i]
		path := "/changes?since=" + strconv.FormatUint(at.Position, 10) + "&epoch=" + strconv.FormatUint(uint64(at.Epoch), 10)
		res, err := s.call(ctx, shardObject(name, i), "GET", path, shardParamsOf(name, p, i), nil)
		if err != nil {
			return err
		}
		if res.StatusCode == http.StatusGone {
			res.Body.Close()
			gone[i] = true
			return nil
		}
		if res.StatusCode >= 300 {
			return decodeResponse(res, nil)
		}
		defer res.Body.Close()
		pos, ok := parsePosition(res.Header.Get(positionHeader))
		body, err := io.ReadAll(io.LimitReader(res.Body, maxShardRecord+1))
		switch {
		case err != nil:
			return internalError(http.StatusBadGateway, "shard_unavailable", "reading a shard's changes failed", err)
		case !ok || pos.Epoch != at.Epoch || pos.Position < at.Position || len(body) > maxShardRecord ||
			(len(body) > 0) != (pos.Position > at.Position):
			return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's changes are not a record from %d", i, at.Position),
				fmt.Errorf("position %q, %d bytes", res.Header.Get(positionHeader), len(body)))
		}
		parts[i], next.Shards[i] = body, pos
		return nil
	})
	if err != nil {
		return nil, next, err
	}
	for _, g := range gone {
		if g {
			return nil, next, nil
		}
	}
	return parts, next, nil
}

// positions asks every shard for its epoch and log position.
func (s *Server) positions(ctx context.Context, name string, p filterParams) ([]snapshot.ShardPosition, error) {
	out := make([]snapshot.ShardPosition, p.Shards)
	err := fanOut(p.Shards, func(i int) error {
		res, err := s.call(ctx, shardObject(name, i), "GET", "/position", shardParamsOf(name, p, i), nil)
		if err != nil {
			return err
		}
		var v struct {
			Epoch    uint32 `json:"epoch"`
			Position uint64 `json:"position"`
		}
		if err := decodeResponse(res, &v); err != nil {
			return err
		}
		out[i] = snapshot.ShardPosition{Epoch: v.Epoch, Position: v.Position}
		return nil
	})
	return out, err
}

// parsePosition reads a shard's "epoch:position".
func parsePosition(v string) (snapshot.ShardPosition, bool) {
	e, p, ok := strings.Cut(v, ":")
	epoch, err1 := strconv.ParseUint(e, 10, 32)
	pos, err2 := strconv.ParseUint(p, 10, 64)
	return snapshot.ShardPosition{Epoch: uint32(epoch), Position: pos}, ok && err1 == nil && err2 == nil
}
