// POST /v1/filters/{name}/merge: bits set offline (a filter built with
// `edgebloom build`, another service's snapshot) OR'ed into a filter in
// bulk. The body is a delta (docs/format.md, "Deltas"), the format /changes
// answers: per shard, the positions to set, Rice-coded, under a CRC-32.
// A million positions (about 150,000 keys at 1 %) take well under a
// megabyte, where an add takes 10,000 keys.
//
// It is checked as a PUT is, before any shard is asked: the delta's shards,
// bits and hashes must be the filter's (409 conflict otherwise, naming
// both), and its generation, when not 0, the filter's; its structure, its
// checksum and its positions are checked by snapshot.DecodeDelta, after the
// positions it declares are counted against maxMergePositions, so a body
// cannot make the front allocate more than that. Each shard then sets the
// positions it was sent and logs those that were new, as an add does, so
// copies, /changes and checkpoints see them.

package main

import (
	"context"
	"encoding/binary"
	"net/http"
	"strconv"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// maxMergePositions bounds the positions of one merge: 8 MiB of them in
// the front, and 4 MiB sent to the shards.
const maxMergePositions = 1 << 20

// mergeCountHeader carries, to a shard, what a merge adds to its count.
const mergeCountHeader = "X-Edgebloom-Count"

// mergeWeight is what a merge of n positions may hold in the front: its
// body, the positions decoded and the shards' bodies.
func mergeWeight(n uint64) int64 { return maxBodyBytes + 12*int64(n) + 64<<10 }

func (s *Server) merge(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	body, err := readRaw(r, "invalid_delta")
	if err != nil {
		return err
	}
	n, err := mergePositions(body)
	if err != nil {
		return err
	}
	leave, err := heavy.enter(ctx, mergeWeight(n))
	if err != nil {
		return err
	}
	defer leave()
	d, err := snapshot.DecodeDelta(body)
	if err != nil {
		return errorf(http.StatusBadRequest, "invalid_delta", "the body is not a delta (docs/format.md, \"Deltas\"): %v", err)
	}
	switch {
	case d.Version != abi.DeltaVersion:
		return errorf(http.StatusBadRequest, "invalid_delta", "a merge takes a delta of version %d; this one is version %d", abi.DeltaVersion, d.Version)
	case d.Seed != 0:
		return errorf(http.StatusConflict, "conflict", "the delta's seed is %d; the service's filters have seed 0", d.Seed)
	}
	for _, rec := range d.Records {
		if rec.Filter != nil {
			return errorf(http.StatusBadRequest, "invalid_delta", "the record of shard %d is a whole shard; a merge takes positions (coding 1)", rec.Shard)
		}
	}
	return s.withParams(ctx, name, func(p filterParams) error {
		m, k, err := bloom.Optimal(shardCapacity(p), p.ErrorRate)
		switch {
		case err != nil:
			return internalError(http.StatusInternalServerError, "internal", "the filter's parameters give no size", err)
		case d.Shards != uint32(p.Shards) || d.M != m || d.K != k:
			return errorf(http.StatusConflict, "conflict",
				"the delta is of %d shards of %d bits and %d hashes; the filter has %d shards of %d bits and %d hashes (capacity %d, errorRate %g)",
				d.Shards, d.M, d.K, p.Shards, m, k, p.Capacity, p.ErrorRate)
		case d.Generation != 0 && d.Generation != p.Generation:
			return errorf(http.StatusConflict, "conflict",
				"the delta is of generation %d; the filter is of generation %d: it was deleted and made again", d.Generation, p.Generation)
		}
		set := make([]uint64, len(d.Records))
		err = fanOut(len(d.Records), func(i int) error {
			rec := d.Records[i]
			payload := make([]byte, 4*len(rec.Positions))
			for j, pos := range rec.Positions {
				binary.LittleEndian.PutUint32(payload[4*j:], uint32(pos))
			}
			header := shardParamsOf(name, p, int(rec.Shard))
			header.Set(mergeCountHeader, strconv.FormatUint(rec.Count, 10))
			res, err := s.call(ctx, shardObject(name, int(rec.Shard)), "POST", "/merge", header, payload)
			if err != nil {
				return err
			}
			var out struct {
				Set *uint64 `json:"set"`
			}
			if err := decodeResponse(res, &out); err != nil {
				return err
			}
			if out.Set == nil || *out.Set > uint64(len(rec.Positions)) {
				return errorf(http.StatusBadGateway, "shard_protocol", "a shard answered a merge of %d positions without a count of those it set", len(rec.Positions))
			}
			set[i] = *out.Set
			return nil
		})
		if err != nil {
			return err
		}
		type shardOut struct {
			Index     uint32 `json:"index"`
			Positions int    `json:"positions"`
			Set       uint64 `json:"set"`
		}
		out := struct {
			Generation uint64     `json:"generation"`
			Set        uint64     `json:"set"`
			Shards     []shardOut `json:"shards"`
		}{Generation: p.Generation, Shards: make([]shardOut, len(d.Records))}
		for i, rec := range d.Records {
			out.Set += set[i]
			out.Shards[i] = shardOut{rec.Shard, len(rec.Positions), set[i]}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	})
}

// mergePositions returns the positions a delta's records declare, from
// their headers alone, or an error when they are more than
// maxMergePositions or the headers do not fit the body (DecodeDelta says
// what is wrong then). Nothing is allocated.
func mergePositions(body []byte) (uint64, error) {
	le := binary.LittleEndian
	if len(body) < abi.DeltaHeader+abi.DeltaTrailer || string(body[:4]) != snapshot.DeltaMagic {
		return 0, errorf(http.StatusBadRequest, "invalid_delta", "the body is not a delta (docs/format.md, \"Deltas\"): it starts with no %q header", snapshot.DeltaMagic)
	}
	records := le.Uint32(body[abi.DeltaAtRecords:])
	end := uint64(len(body) - abi.DeltaTrailer)
	off, n := uint64(abi.DeltaHeader), uint64(0)
	for i := uint32(0); i < records && end-off >= abi.DeltaRecordHeader; i++ {
		n += uint64(le.Uint32(body[off+abi.DeltaRecordAtPositions:]))
		off += abi.DeltaRecordHeader + uint64(le.Uint32(body[off+abi.DeltaRecordAtBytes:]))
		if off > end {
			break
		}
	}
	if n > maxMergePositions {
		return 0, errorf(http.StatusRequestEntityTooLarge, "too_many_positions", "the delta sets %d positions; the limit is %d a merge", n, maxMergePositions)
	}
	return n, nil
}
