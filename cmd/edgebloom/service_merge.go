package main

// push of a filter file to the service: the file's bits, as deltas of at
// most mergePositions positions and client.MaxBodyBytes bytes, sent to
// POST /v1/filters/{name}/merge by the client's Merge (worker/README.md, "Publishing a filter
// built offline"). The pieces follow from the file alone, so a push killed
// part way resumes at the piece after the last acknowledged one; a merge
// sent again sets nothing and adds no count.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/snapshot"
)

// mergePositions is the most positions a merge takes.
const mergePositions = client.MaxMergePositions

// filterShards loads a filter file: a classic filter (one shard) or a
// sharded snapshot, and the service parameters that give its shards.
func filterShards(path string) ([]*bloom.Filter, client.Params, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, client.Params{}, err
	}
	set, err := snapshot.Load(data, client.MaxShardBits)
	if err != nil {
		return nil, client.Params{}, fmt.Errorf("%s: %w (push takes a classic filter of at most %d bits, or a sharded snapshot)", path, err, client.MaxShardBits)
	}
	shards := []*bloom.Filter{}
	switch s := set.(type) {
	case *bloom.Filter:
		shards = append(shards, s)
	case *snapshot.Sharded:
		shards = s.Shards
	}
	f := shards[0]
	if f.Capacity() == 0 {
		return nil, client.Params{}, fmt.Errorf("%s: a filter made from an explicit size (m, k), which no service filter has: build it with -n and -p", path)
	}
	return shards, client.Params{Capacity: f.Capacity() * uint64(len(shards)), ErrorRate: f.TargetFPR(), Shards: len(shards)}, nil
}

// pushFilter publishes the filter in path, from piece st.Done on.
func pushFilter(ctx context.Context, e *env, c *client.Client, name, path string, so *serviceOpts, st *pushState, statePath string) (uint64, error) {
	shards, params, err := filterShards(path)
	if err != nil {
		return 0, err
	}
	params.Canonicalize = so.canonical
	// The filter is made when the first merge finds none: with the secret;
	// a write token pushes to a filter that exists. One that exists with
	// other shards, bits or hashes is the merge's 409 conflict, which says
	// which.
	merge := func(body []byte) (*client.MergeResult, error) {
		ans, err := c.Merge(ctx, name, body)
		if errors.Is(err, client.ErrNotFound) {
			if _, err := c.Create(ctx, name, params); err != nil {
				return nil, fmt.Errorf("making %s for %s (capacity %d, errorRate %g, %d shards): %w", name, path, params.Capacity, params.ErrorRate, params.Shards, err)
			}
			ans, err = c.Merge(ctx, name, body)
		}
		if errors.Is(err, client.ErrConflict) && st.Generation != 0 {
			err = fmt.Errorf("%w (the filter was made again since the push began: push --restart to publish to the new one)", err)
		}
		return ans, err
	}
	var total, count uint64
	for _, f := range shards {
		total += f.SetBits()
		count += f.Count()
	}
	var done atomic.Uint64
	prog := startProgressOf(e.stderr, "push", progressInterval(e, so), nil, func() float64 {
		return float64(done.Load()) / float64(max(total, 1))
	})
	defer prog.done()
	piece := uint64(0)
	for i, f := range shards {
		r := newPositionReader(f)
		for positions := r.fill(); len(positions) > 0; positions = r.fill() {
			body, n := mergeBody(st.Generation, f, len(shards), i, positions)
			if n == len(positions) && r.done() {
				// The shard's count goes with its last piece: a merge sent
				// again sets nothing and adds no count.
				body, _ = mergeBody(st.Generation, f, len(shards), i, positions[:n], f.Count())
			}
			if piece >= st.Done {
				ans, err := merge(body)
				if err != nil {
					return uint64(float64(count) * float64(done.Load()) / float64(max(total, 1))), err
				}
				st.Generation = ans.Generation
				st.New += ans.Set
				st.Done = piece + 1
				if err := st.save(statePath); err != nil {
					return 0, err
				}
			}
			piece++
			done.Add(uint64(n))
			prog.keys.Store(uint64(float64(count) * float64(done.Load()) / float64(max(total, 1))))
			r.consume(n)
		}
	}
	return count, nil
}

// A positionReader reads the positions of a filter's set bits in order, up
// to mergePositions at a time, without holding them all: a 10 M-key filter
// sets 50 M bits, 400 MB as positions.
type positionReader struct {
	f       *bloom.Filter
	off     uint64 // the payload's next byte to scan
	buf     []byte
	store   []uint64
	pending []uint64 // read, not consumed
}

func newPositionReader(f *bloom.Filter) *positionReader {
	return &positionReader{f: f, buf: make([]byte, 64<<10), store: make([]uint64, 0, mergePositions+8*(64<<10))}
}

// fill returns the next positions not consumed: at least mergePositions of
// them unless the filter has fewer left.
func (r *positionReader) fill() []uint64 {
	r.pending = append(r.store[:0], r.pending...)
	for len(r.pending) < mergePositions && r.off < r.f.PayloadSize() {
		n, _ := r.f.ReadAt(r.buf[:min(uint64(len(r.buf)), r.f.PayloadSize()-r.off)], int64(bloom.HeaderSize+r.off))
		for j, b := range r.buf[:n] {
			for ; b != 0; b &= b - 1 {
				r.pending = append(r.pending, 8*(r.off+uint64(j))+uint64(trailingZeros8(b)))
			}
		}
		r.off += uint64(n)
	}
	return r.pending
}

// consume drops the first n positions fill returned.
func (r *positionReader) consume(n int) { r.pending = r.pending[n:] }

// done reports whether the filter has no positions beyond those pending.
func (r *positionReader) done() bool { return r.off >= r.f.PayloadSize() }

// setPositions returns the positions of f's set bits, increasing.
func setPositions(f *bloom.Filter) []uint64 {
	var out []uint64
	for r := newPositionReader(f); ; {
		p := r.fill()
		if len(p) == 0 {
			return out
		}
		out = append(out, p...)
		r.consume(len(p))
	}
}

func trailingZeros8(b byte) int {
	n := 0
	for b&1 == 0 {
		b >>= 1
		n++
	}
	return n
}

// mergeBody encodes the first positions of shard i (of shards, each like
// f) that fit one merge, with count, and returns the delta and how many
// positions it holds.
func mergeBody(generation uint64, f *bloom.Filter, shards, i int, positions []uint64, count ...uint64) ([]byte, int) {
	n := min(len(positions), mergePositions)
	for {
		d := &snapshot.Delta{Generation: generation, M: f.NumBits(), K: f.NumHashes(), Shards: uint32(shards),
			Records: []snapshot.DeltaRecord{{Shard: uint32(i), From: 0, To: 1, Positions: positions[:n]}}}
		if len(count) > 0 {
			d.Records[0].Count = count[0]
		}
		body := snapshot.EncodeDelta(d)
		if len(body) <= client.MaxBodyBytes || n == 1 {
			return body, n
		}
		// Sparse positions take more bits each: fewer of them.
		n = int(math.Floor(float64(n) * float64(client.MaxBodyBytes) / float64(len(body)) * 0.95))
	}
}
