package redisfilter

// Add, Has and their pipelined batches, and the counts: the calls of the
// scripts that read and set bits.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// Add adds key and reports whether it was new, that is whether at least one
// of its bits was unset, in one round trip. Of concurrent Adds of one key,
// from any number of processes, exactly one reports it new (but see
// Failures in the package doc about retries). A false return for a key
// never added before is a false positive. Strings are hashed as their UTF-8
// bytes, as bloom.Filter.AddString hashes them.
func (f *Filter) Add(ctx context.Context, key string) (bool, error) {
	return f.one(ctx, addScript, "add to", key)
}

// Has reports whether key is probably in the filter, in one round trip. It
// never reports false for a key that was added; it may report true for one
// that was not.
func (f *Filter) Has(ctx context.Context, key string) (bool, error) {
	return f.one(ctx, hasScript, "check", key)
}

func (f *Filter) one(ctx context.Context, s *redis.Script, op, key string) (bool, error) {
	sh := f.shard(key)
	args := f.appendOffsets(f.scriptArgs(1), key)
	res, err := redisx.Ints(s.Run(ctx, f.c, f.scriptKeys(sh), args...), 1)
	if err != nil {
		return false, f.lost(ctx, f.wrap(op, f.bits[sh], err))
	}
	return res[0] == 1, nil
}

// window is the number of keys AddMany and HasMany send in one pipeline.
const window = 16384

// AddMany adds keys and reports, for each, whether it was new, as Add does,
// in pipelined batches: one script call per shard and 1000 keys, and one
// round trip per 16 384 keys. Each key is added atomically, and a key that
// appears twice is new at most once. On error the keys of the batches sent
// so far may have been added, and the result is nil.
func (f *Filter) AddMany(ctx context.Context, keys []string) ([]bool, error) {
	return f.many(ctx, addScript, "add to", keys)
}

// HasMany reports, for each key, whether it is probably in the filter, as
// Has does, in pipelined batches as AddMany.
func (f *Filter) HasMany(ctx context.Context, keys []string) ([]bool, error) {
	return f.many(ctx, hasScript, "check", keys)
}

func (f *Filter) many(ctx context.Context, s *redis.Script, op string, keys []string) ([]bool, error) {
	out := make([]bool, len(keys))
	for i := 0; i < len(keys); i += window {
		j := min(len(keys), i+window)
		if err := f.runWindow(ctx, s, op, keys[i:j], out[i:j]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// A call is one script call of AddMany or HasMany: keys idx of one shard.
type call struct {
	shard int
	idx   []int
	args  []any
	cmd   *redis.Cmd
}

// runWindow runs s over keys in one pipeline and writes the answers to out.
func (f *Filter) runWindow(ctx context.Context, s *redis.Script, op string, keys []string, out []bool) error {
	groups := make(map[int][]int)
	for i, key := range keys {
		sh := f.shard(key)
		groups[sh] = append(groups[sh], i)
	}
	var calls []*call
	for sh, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), f.batch)
			c := &call{shard: sh, idx: idx[:n], args: f.scriptArgs(n)}
			for _, i := range c.idx {
				c.args = f.appendOffsets(c.args, keys[i])
			}
			calls = append(calls, c)
			idx = idx[n:]
		}
	}
	if !f.loaded.Load() {
		if err := f.loadScripts(ctx); err != nil {
			return err
		}
		f.loaded.Store(true)
	}
	for attempt := 0; ; attempt++ {
		_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, c := range calls {
				c.cmd = s.EvalSha(ctx, pipe, f.scriptKeys(c.shard), c.args...)
			}
			return nil
		})
		// A script cache emptied by a restart of Redis answers NOSCRIPT:
		// those calls did not run, so they are sent again once loaded.
		var again []*call
		for _, c := range calls {
			res, err := redisx.Ints(c.cmd, len(c.idx))
			switch {
			case redis.HasErrorPrefix(err, "NOSCRIPT") && attempt == 0:
				again = append(again, c)
			case err != nil:
				return f.lost(ctx, f.wrap(op, f.bits[c.shard], err))
			default:
				for j, i := range c.idx {
					out[i] = res[j] == 1
				}
			}
		}
		if len(again) == 0 {
			return nil
		}
		if err := f.loadScripts(ctx); err != nil {
			return err
		}
		calls = again
	}
}

// loadScripts loads the scripts into Redis (every master of a Cluster), so
// that pipelines can call them by SHA-1.
func (f *Filter) loadScripts(ctx context.Context) error {
	for _, s := range []*redis.Script{addScript, hasScript, statScript} {
		if err := s.Load(ctx, f.c).Err(); err != nil {
			return f.wrap("load the scripts of", f.name, err)
		}
	}
	return nil
}

// Count returns the number of keys added that were new, summed over the
// shards: the Count of the filter Snapshot writes.
func (f *Filter) Count(ctx context.Context) (uint64, error) {
	counts, _, err := f.stats(ctx, false)
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n, err
}

// SetBits returns the number of bits set in all shards (BITCOUNT).
func (f *Filter) SetBits(ctx context.Context) (uint64, error) {
	_, bits, err := f.stats(ctx, true)
	return bits, err
}

// stats reads every shard's count and, withBits, the bits set in all
// shards, with the checks of the scripts: the shards are the handle's
// filter, whole. A missing count is 0.
func (f *Filter) stats(ctx context.Context, withBits bool) (counts []uint64, bits uint64, err error) {
	cmds := make([]*redis.Cmd, len(f.bits))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := range f.bits {
			cmds[i] = statScript.Eval(ctx, pipe, f.scriptKeys(i), append(f.scriptArgs(0), withBits)...)
		}
		return nil
	})
	counts = make([]uint64, len(cmds))
	for i, cmd := range cmds {
		var set uint64
		if counts[i], set, err = f.statReply(ctx, i, cmd); err != nil {
			return nil, 0, err
		}
		bits += set
	}
	return counts, bits, nil
}

// statReply reads the reply of statScript on shard sh: its count, checked
// by parseCount, and the number of its bits set.
func (f *Filter) statReply(ctx context.Context, sh int, cmd *redis.Cmd) (count, bits uint64, err error) {
	res, err := redisx.Values(cmd, 2)
	if err != nil {
		return 0, 0, f.lost(ctx, f.wrap("read the count of", f.bits[sh], err))
	}
	s, err := redisx.String(res[0])
	if err != nil {
		return 0, 0, f.wrap("read the count of", f.counts[sh], err)
	}
	set, err := redisx.Int(res[1])
	if err == nil && set < 0 {
		err = fmt.Errorf("%w: %d bits set", redisx.ErrUnexpectedReply, set)
	}
	if err != nil {
		return 0, 0, f.wrap("count the bits of", f.bits[sh], err)
	}
	count, err = f.parseCount(sh, s)
	return count, uint64(set), err
}

// parseCount reads shard sh's count, which must be a number no larger than
// maxCount.
func (f *Filter) parseCount(sh int, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: %q: count %q is no number", ErrCorrupt, f.counts[sh], s)
	case n > f.maxCount():
		return 0, fmt.Errorf("%w: %q: count %d, more than the %d a shard of %d bits can have counted", ErrCorrupt, f.counts[sh], n, f.maxCount(), f.p.m)
	}
	return n, nil
}
