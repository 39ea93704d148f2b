// GET snapshot: the filter in the binary format of docs/format.md (one
// shard's plain encoding, or a sharded container), streamed shard by shard
// so that the front never holds a shard in memory. The length of every
// shard is known from the parameters, so the answer's Content-Length is
// sent first, and a shard that fails part way leaves the body visibly
// short.

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// encodedSize is the length of a shard's plain encoding, known from the
// parameters alone.
func encodedSize(p filterParams) uint64 {
	m, _, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	return bloom.HeaderSize + 8*((m+63)/64) + 8
}

// shardSnapshot opens shard sh's snapshot: the response body, once the
// shard has answered 200.
func (s *Server) shardSnapshot(ctx context.Context, name string, p filterParams, sh int) (io.ReadCloser, error) {
	res, err := s.call(ctx, shardObject(name, sh), "GET", "/snapshot", shardParamsOf(name, p, sh), nil)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 {
		return nil, decodeResponse(res, nil)
	}
	// The length header, when the shard sends one (syumai/workers leaves
	// res.ContentLength 0), is checked before anything is written.
	if n, want := res.Header.Get("Content-Length"), strconv.FormatUint(encodedSize(p), 10); n != "" && n != want {
		res.Body.Close()
		return nil, errorf(http.StatusBadGateway, "shard_protocol", "shard %d's snapshot is %s bytes, want %s", sh, n, want)
	}
	return res.Body, nil
}

// copyShard streams a shard's snapshot to w: exactly encodedSize(p) bytes,
// so the front never holds a shard (up to maxShardBits/8 bytes) in memory.
// A shard that sends another length, or a record whose checksum (XXH64 of
// all but its last 8 bytes, docs/format.md) is not right, is an error: the
// checksum's 8 bytes are written only once they match, so the response is
// then shorter than its Content-Length, a visible failure.
func copyShard(w io.Writer, body io.ReadCloser, p filterParams, sh int) error {
	defer body.Close()
	want := int64(encodedSize(p)) - checksumBytes
	cw := &clientWriter{w: w}
	sum := xxhash.New()
	n, err := io.Copy(io.MultiWriter(sum, cw), io.LimitReader(body, want))
	var stored [checksumBytes]byte
	if err == nil && n == want {
		_, err = io.ReadFull(body, stored[:])
	}
	switch {
	case cw.err != nil:
		return internalError(499, "client_gone", fmt.Sprintf("the client stopped reading in shard %d's snapshot", sh), cw.err)
	case err == nil && n < want:
		err = fmt.Errorf("the body ended after %d bytes", n)
	case err != nil:
	case binary.LittleEndian.Uint64(stored[:]) != sum.Sum64():
		return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's snapshot fails its checksum", sh), nil)
	default:
		// Only io.EOF ends the body cleanly: a read that fails after
		// the checksum is a body that did not end as it should.
		var extra [1]byte
		m, rerr := io.ReadFull(body, extra[:])
		switch {
		case m == 0 && rerr == io.EOF:
			if _, err := cw.Write(stored[:]); err != nil {
				return internalError(499, "client_gone", fmt.Sprintf("the client stopped reading in shard %d's snapshot", sh), err)
			}
			return nil
		case m == 0:
			err = fmt.Errorf("the body failed after them: %w", rerr)
		default:
			err = errors.New("the body goes on after them")
		}
	}
	return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's snapshot is not %d bytes", sh, want+checksumBytes), err)
}

// checksumBytes is the length of a filter record's checksum, its last bytes.
const checksumBytes = 8

// clientWriter keeps the first error of writing to the client, so that a
// snapshot cut short is logged as the client's doing or a shard's.
type clientWriter struct {
	w   io.Writer
	err error
}

func (c *clientWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// streamFailed logs why a snapshot's body ends short at shard sh. The
// status and the length went out before, so the client sees only a body
// shorter than its Content-Length: the cause is in the log, under the
// request id that the shards' log lines carry too.
func streamFailed(ctx context.Context, name string, sh int, err error) {
	if errors.Is(context.Cause(ctx), errClientGone) {
		// Nobody reads the rest.
		return
	}
	ae := *asAPIError(err)
	ae.Message = fmt.Sprintf("the snapshot of %q ends short at shard %d: %s", name, sh, ae.Message)
	logError(requestID(ctx), &ae)
}

// snapshot writes the plain encoding of a one-shard filter, or a sharded
// container (package snapshot), streamed shard by shard.
func (s *Server) snapshot(ctx context.Context, w http.ResponseWriter, name string) error {
	leave, err := s.enterHeavy(ctx, name, snapshotWeight)
	if err != nil {
		return err
	}
	defer leave()
	var p filterParams
	var first io.ReadCloser
	err = s.withParams(ctx, name, func(q filterParams) error {
		var err error
		p = q
		first, err = s.shardSnapshot(ctx, name, p, 0)
		return err
	})
	if err != nil {
		return err
	}
	return s.writeSnapshot(ctx, w, name, p, first)
}

// writeSnapshot streams the snapshot whose shard 0 is first.
func (s *Server) writeSnapshot(ctx context.Context, w http.ResponseWriter, name string, p filterParams, first io.ReadCloser) error {
	s.streamSnapshot(ctx, w, name, p, first)
	return nil
}

// streamSnapshot streams the snapshot whose shard 0 is first, and reports
// whether all of it was sent, every shard's record whole and checked.
func (s *Server) streamSnapshot(ctx context.Context, w http.ResponseWriter, name string, p filterParams, first io.ReadCloser) bool {
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+name+`.ebloom"`)
	if p.Shards == 1 {
		h.Set("X-Edgebloom-Format", "filter")
		h.Set("Content-Length", strconv.FormatUint(encodedSize(p), 10))
		w.WriteHeader(http.StatusOK)
		if err := copyShard(w, first, p, 0); err != nil {
			streamFailed(ctx, name, 0, err)
			return false
		}
		return true
	}
	lengths := make([]uint64, p.Shards)
	total := uint64(snapshot.HeaderSize(p.Shards))
	for i := range lengths {
		lengths[i] = encodedSize(p)
		total += lengths[i]
	}
	h.Set("X-Edgebloom-Format", "sharded")
	h.Set("Content-Length", strconv.FormatUint(total, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(snapshot.AppendHeader(nil, lengths)); err != nil {
		first.Close()
		return false
	}
	// The status is sent: a shard that fails ends the body short, which
	// the length header makes a visible failure for the client, and the
	// log says why.
	body := first
	for sh := 0; sh < p.Shards; sh++ {
		var err error
		if sh > 0 {
			body, err = s.shardSnapshot(ctx, name, p, sh)
		}
		if err == nil {
			err = copyShard(w, body, p, sh)
		}
		if err != nil {
			streamFailed(ctx, name, sh, err)
			return false
		}
	}
	return true
}
