// GET changes: what a local copy of a filter needs to catch up. From a
// cursor it gets a delta, the bits set since (small while the copy keeps
// up), in which a shard whose changes it no longer holds, or whose changes
// would take more bytes than itself, comes whole; without a cursor, when
// no shard holds what it needs, or when the filter was made again, the
// whole snapshot and a cursor for next time. The protocol behind it is
// /position, /changes and /snapshot of each shard (objects.go).

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/edgebloom/edgebloom/bloom"
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
// the shards no longer hold what the cursor needs. See worker/DESIGN.md,
// "Local copies".
func (s *Server) changes(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	var since *snapshot.Cursor
	if q := r.URL.Query(); q.Has("since") {
		c, err := snapshot.ParseCursor(q.Get("since"))
		if err != nil {
			return errorf(http.StatusBadRequest, "invalid_params", "since must be the X-Edgebloom-Cursor of an earlier answer (%v)", err)
		}
		for i, sh := range c.Shards {
			if sh.Position > abi.MaxLogPosition {
				// No shard wrote it: refused here, not by the shard in
				// words of the internal protocol.
				return errorf(http.StatusBadRequest, "invalid_params", "since must be the X-Edgebloom-Cursor of an earlier answer (shard %d's position %d is past any a shard writes, %d)", i, sh.Position, uint64(abi.MaxLogPosition))
			}
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
		gone   []bool
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
			parts, gone, next, err = s.shardChanges(ctx, name, p, *since)
			if err != nil || slices.Contains(gone, false) {
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
	if !slices.Contains(gone, true) {
		out := assembleDelta(p, parts)
		h.Set("Content-Type", "application/octet-stream")
		h.Set("X-Edgebloom-Format", "delta")
		h.Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
		return nil
	}
	return s.writeMixedDelta(ctx, w, name, p, parts, gone, next)
}

// writeMixedDelta streams a delta in which the shards that answered
// changes_gone come whole (docs/format.md, "Deltas"): each one's snapshot
// is copied from the shard into its record, so the front holds no shard,
// and its record's count is read from the snapshot's header. The length of
// every record is known first, so the answer's Content-Length is sent
// first, and a shard that fails part way leaves the body visibly short,
// as a snapshot's does. next holds, for a shard that comes whole, the
// position it answered with, at or before its snapshot.
func (s *Server) writeMixedDelta(ctx context.Context, w http.ResponseWriter, name string, p filterParams, parts [][]byte, gone []bool, next snapshot.Cursor) error {
	m, k, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	size := encodedSize(p)
	records, total := 0, uint64(abi.DeltaHeader+abi.DeltaTrailer)
	var whole []string
	for i, part := range parts {
		switch {
		case gone[i]:
			records++
			total += abi.DeltaRecordHeader + 1 + size
			whole = append(whole, strconv.Itoa(i))
		case len(part) > 0:
			records++
			total += uint64(len(part))
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Edgebloom-Format", "delta")
	// Which shards come whole: what a copy downloads beyond the changes.
	h.Set("X-Edgebloom-Whole-Shards", strings.Join(whole, ","))
	h.Set("Content-Length", strconv.FormatUint(total, 10))
	w.WriteHeader(http.StatusOK)
	sum := crc32.NewIEEE()
	out := io.MultiWriter(w, sum)
	out.Write(snapshot.AppendDeltaHeader(nil, p.Generation, 0, m, k, uint32(p.Shards), uint32(records)))
	for i, part := range parts {
		if !gone[i] {
			out.Write(part)
			continue
		}
		body, err := s.shardSnapshot(ctx, name, p, i)
		if err == nil {
			err = copyWholeShard(out, body, p, i, next.Shards[i])
		}
		if err != nil {
			streamFailed(ctx, name, i, err)
			return nil
		}
	}
	w.Write(binary.LittleEndian.AppendUint32(nil, sum.Sum32()))
	return nil
}

// copyWholeShard writes the record of shard i that carries its snapshot,
// body: the record's header (its count from the snapshot's header), the
// coding byte, then the snapshot, streamed (copyShard).
func copyWholeShard(w io.Writer, body io.ReadCloser, p filterParams, i int, at snapshot.ShardPosition) error {
	head := make([]byte, abi.HeaderSize)
	if _, err := io.ReadFull(body, head); err != nil {
		body.Close()
		return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's snapshot has no header", i), err)
	}
	le := binary.LittleEndian
	rec := le.AppendUint32(nil, uint32(i))
	rec = le.AppendUint32(rec, at.Epoch)
	rec = le.AppendUint64(rec, 0)
	rec = le.AppendUint64(rec, at.Position)
	rec = append(rec, head[abi.RecordAtCount:abi.RecordAtCount+8]...)
	rec = le.AppendUint32(rec, 0)
	rec = le.AppendUint32(rec, uint32(1+encodedSize(p)))
	rec = append(rec, abi.DeltaCodingShard)
	if _, err := w.Write(rec); err != nil {
		body.Close()
		return internalError(499, "client_gone", fmt.Sprintf("the client stopped reading at shard %d", i), err)
	}
	return copyShard(w, struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), body), body}, p, i)
}

// shardChanges asks every shard for its record of a delta from since. It
// returns the records (empty for a shard with nothing new), which shards
// answered changes_gone (they no longer hold what since needs, or it would
// take more bytes than the shard), and the cursor after them: for a shard
// that is gone, the position it answered with.
func (s *Server) shardChanges(ctx context.Context, name string, p filterParams, since snapshot.Cursor) ([][]byte, []bool, snapshot.Cursor, error) {
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
		pos, ok := parsePosition(res.Header.Get(positionHeader))
		if res.StatusCode == http.StatusGone {
			res.Body.Close()
			if !ok {
				return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's changes_gone has no position", i), nil)
			}
			gone[i], next.Shards[i] = true, pos
			return nil
		}
		if res.StatusCode >= 300 {
			return decodeResponse(res, nil)
		}
		defer res.Body.Close()
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
	return parts, gone, next, err
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
