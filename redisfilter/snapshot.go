package redisfilter

// Snapshot and Restore: the filter in the portable format, streamed out of
// and into Redis.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/redis/go-redis/v9"
)

// chunk is the most bytes Snapshot and Restore move in one command.
const chunk = 4 << 20

// SnapshotSize returns the length of the snapshot: a classic record with one
// shard, a sharded container with several.
func (f *Filter) SnapshotSize() uint64 {
	rec := bloom.HeaderSize + f.payloadLen() + 8
	if f.p.shards == 1 {
		return rec
	}
	return uint64(snapshot.HeaderSize(f.p.shards)) + uint64(f.p.shards)*rec
}

// Snapshot returns the filter in the portable format; see WriteSnapshot.
func (f *Filter) Snapshot(ctx context.Context) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(f.SnapshotSize()))
	if _, err := f.WriteSnapshot(ctx, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteSnapshot writes the filter to w in the portable format and returns
// the bytes written: with one shard, the classic filter record of
// docs/format.md, which bloom.Decode and the npm module's fromBytes read;
// with several, the sharded container of package snapshot (as the edge
// service's snapshots), which snapshot.Load reads. Its bytes equal those
// that bloom.Filter.MarshalBinary gives for a filter (one a shard, keys
// routed by snapshot.Route) made with the same parameters and given the same
// keys, count included, as long as no false positive made the two disagree
// on which keys were new.
//
// Each shard is read in pieces of 4 MiB (GETRANGE) and streamed, so memory
// does not grow with the filter. It is consistent per shard while nobody
// adds; a shard's count is read before its bits, so bits added meanwhile
// may appear without being counted.
func (f *Filter) WriteSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	var written int64
	if f.p.shards > 1 {
		lengths := make([]uint64, f.p.shards)
		for i := range lengths {
			lengths[i] = bloom.HeaderSize + f.payloadLen() + 8
		}
		n, err := w.Write(snapshot.AppendHeader(nil, lengths))
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	for sh := range f.bits {
		n, err := f.writeShard(ctx, w, sh)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func (f *Filter) writeShard(ctx context.Context, w io.Writer, sh int) (int64, error) {
	// The checks of the scripts first: the shard is the handle's filter,
	// whole, and its count within bounds, so the record passes the decoder.
	n, _, err := f.statReply(ctx, sh, statScript.Run(ctx, f.c, f.scriptKeys(sh), append(f.scriptArgs(0), false)...))
	if err != nil {
		return 0, err
	}
	info := bloom.Info{Seed: f.p.seed, Bits: f.p.m, Hashes: f.p.k, Count: n, Capacity: f.p.capacity, FPRate: f.p.fpRate}
	r := &shardReader{ctx: ctx, f: f, key: f.bits[sh], size: f.payloadLen()}
	written, err := bloom.WriteClassic(w, info, r)
	if r.err != nil {
		err = r.err // the Redis error, not what WriteClassic made of it
	}
	return written, err
}

// A shardReader reads a shard's string in pieces of 4 MiB.
type shardReader struct {
	ctx  context.Context
	f    *Filter
	key  string
	size uint64
	off  uint64
	buf  []byte
	err  error
}

func (r *shardReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.off >= r.size {
			return 0, io.EOF
		}
		end := min(r.size, r.off+chunk)
		s, err := r.f.c.GetRange(r.ctx, r.key, int64(r.off), int64(end-1)).Result()
		switch {
		case err != nil:
			r.err = r.f.wrap("read", r.key, err)
		case uint64(len(s)) != end-r.off:
			r.err = fmt.Errorf("%w: %q changed length during the snapshot", ErrCorrupt, r.key)
		}
		if r.err != nil {
			return 0, r.err
		}
		r.buf = []byte(s)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.off += uint64(n)
	return n, nil
}

// Restore makes the filter called name from data, a snapshot as
// WriteSnapshot writes it, bloom.Filter.MarshalBinary, the CLI or the edge
// service: a classic filter record, or a sharded container whose shards
// share their parameters. Every shard may have at most maxBits bits, and at
// most MaxShardBits: each header is checked against the bound before
// anything is allocated, and the whole snapshot (checksums included) is
// validated before Redis is written. Bad data gives the error of
// bloom.Decode or snapshot.Load.
//
// The name must be free: when it or a shard key exists, the error wraps
// ErrExists and nothing is written. The shards are written first, whole, in
// pieces of 4 MiB, and the parameters last, so that no process opens the
// filter before it is whole. (A New of the same name between the check and
// the end is not excluded: Restore then reports ErrExists, and the shards
// hold both filters' bits.)
func Restore(ctx context.Context, c redis.UniversalClient, name string, data []byte, maxBits uint64) (*Filter, error) {
	return RestoreWithOptions(ctx, c, name, data, maxBits, RestoreOptions{})
}

// RestoreOptions are the options of RestoreWithOptions.
type RestoreOptions struct {
	// Recreate lets Restore replace a lost filter (ErrLost: some of its
	// keys are gone): what is left of it is deleted first. Handles on it
	// then get ErrRecreated. A whole filter under the name is never
	// replaced (ErrExists).
	Recreate bool

	_ struct{}
}

// RestoreWithOptions is Restore with options.
func RestoreWithOptions(ctx context.Context, c redis.UniversalClient, name string, data []byte, maxBits uint64, opts RestoreOptions) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	set, err := snapshot.Load(data, min(maxBits, MaxShardBits))
	if err != nil {
		if errors.Is(err, bloom.ErrTooLarge) && maxBits > MaxShardBits {
			err = fmt.Errorf("%w (a Redis string holds at most 2^32 bits: split the filter into shards)", err)
		}
		return nil, fmt.Errorf("redisfilter: restore %q: %w", name, err)
	}
	var shards []*bloom.Filter
	var payloads [][]byte
	rec := func(f *bloom.Filter, off uint64) {
		shards = append(shards, f)
		payloads = append(payloads, data[off+bloom.HeaderSize:off+f.EncodedSize()-8])
	}
	switch s := set.(type) {
	case *bloom.Filter:
		rec(s, 0)
	case *snapshot.Sharded:
		off := uint64(snapshot.HeaderSize(len(s.Shards)))
		for _, sh := range s.Shards {
			rec(sh, off)
			off += sh.EncodedSize()
		}
	}
	first := shards[0]
	p := params{shards: len(shards), m: first.NumBits(), k: first.NumHashes(), seed: first.Seed(),
		capacity: first.Capacity(), fpRate: first.TargetFPR()}
	for i, sh := range shards {
		q := params{shards: p.shards, m: sh.NumBits(), k: sh.NumHashes(), seed: sh.Seed(), capacity: sh.Capacity(), fpRate: sh.TargetFPR()}
		switch {
		case q != p:
			return nil, fmt.Errorf("redisfilter: restore %q: shard %d has %s, shard 0 %s; a filter in Redis has one size for all shards", name, i, q, p)
		case sh.Count() > (bloom.MaxCountPerBit-1)*p.m:
			// Adds may raise a count by one a bit set, and the scripts
			// refuse one past bloom.MaxCountPerBit·m.
			return nil, fmt.Errorf("redisfilter: restore %q: %w: shard %d counts %d keys, more than the %d its %d bits can have counted", name, bloom.ErrCorrupt, i, sh.Count(), (bloom.MaxCountPerBit-1)*p.m, p.m)
		}
	}
	f := newFilter(c, name, p)
	f.gen = newGeneration()
	if err := f.clearLost(ctx, opts.Recreate); err != nil {
		return nil, err
	}
	if err := f.checkFree(ctx, true); err != nil {
		return nil, err
	}
	for i, payload := range payloads {
		if err := f.writeShardBits(ctx, i, payload, shards[i].Count()); err != nil {
			return nil, err
		}
	}
	created, err := f.create(ctx)
	if err != nil {
		return nil, err
	}
	if !created {
		// Made by another process since checkFree, with these parameters.
		return nil, fmt.Errorf("%w: %q was made while it was being restored", ErrExists, name)
	}
	return f, nil
}

// writeShardBits writes a shard's payload, whole, its count, and last its
// generation.
func (f *Filter) writeShardBits(ctx context.Context, sh int, payload []byte, count uint64) error {
	for off := 0; off < len(payload); off += chunk {
		piece := payload[off:min(len(payload), off+chunk)]
		if err := f.c.SetRange(ctx, f.bits[sh], int64(off), string(piece)).Err(); err != nil {
			return f.wrap("restore", f.bits[sh], err)
		}
	}
	if count > 0 {
		if err := f.c.Set(ctx, f.counts[sh], count, 0).Err(); err != nil {
			return f.wrap("restore", f.counts[sh], err)
		}
	}
	if err := f.c.Set(ctx, f.gens[sh], f.gen, 0).Err(); err != nil {
		return f.wrap("restore", f.gens[sh], err)
	}
	return nil
}

// clearLost finds what is left of a lost filter under f's name (ErrLost):
// with del it deletes it; without, it returns the error wrapping ErrLost.
// It returns nil when no filter under the name is lost: the name is free,
// holds a whole filter, or something else (checkFree then says what).
func (f *Filter) clearLost(ctx context.Context, del bool) error {
	h, err := f.c.HGetAll(ctx, f.name).Result()
	if err != nil {
		return f.wrap("check", f.name, err)
	}
	if len(h) == 0 {
		var lost *lostError
		if !errors.As(f.checkFree(ctx, false), &lost) {
			return nil
		}
		if !del {
			return lost
		}
		return f.deleteLost(ctx, "", lost.gens)
	}
	p, gen, err := parseParams(h)
	if err != nil {
		return nil
	}
	old := newFilter(f.c, f.name, p)
	old.gen = gen
	if err := old.checkShards(ctx); !errors.Is(err, ErrLost) || !del {
		return err
	}
	return old.deleteLost(ctx, gen, nil)
}
