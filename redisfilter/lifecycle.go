package redisfilter

// Making, checking and deleting a filter's keys in Redis, so that no
// process answers from a filter that is lost, half made or another one.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// checkFree refuses to make a filter over keys that hold data: any of its
// keys when all is true (Restore), else its shards' keys while its
// parameters are absent (New; when they exist, create compares them).
// Shard keys with a generation are what is left of a lost filter: the
// error is then a *lostError.
func (f *Filter) checkFree(ctx context.Context, all bool) error {
	keys := f.Keys()
	types := make([]*redis.StatusCmd, len(keys))
	gens := make([]*redis.StringCmd, len(f.gens))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, key := range keys {
			types[i] = pipe.Type(ctx, key)
		}
		for i, key := range f.gens {
			gens[i] = pipe.Get(ctx, key)
		}
		return nil
	})
	var taken error
	for i, t := range types {
		switch {
		case t.Err() != nil:
			return f.wrap("check the keys of", keys[i], t.Err())
		case t.Val() == "none":
		case i == 0 && !all:
			return nil
		case i == 0:
			return fmt.Errorf("%w: %q exists (a %s); delete it first", ErrExists, f.name, t.Val())
		case taken == nil:
			taken = fmt.Errorf("%w: %q does not exist, but its key %q holds a %s", ErrExists, f.name, keys[i], t.Val())
		}
	}
	if taken == nil {
		return nil
	}
	lost := &lostError{name: f.name, gens: make([]string, len(gens))}
	found := false
	for i, g := range gens {
		v, err := g.Result()
		if err == nil && validGeneration(v) {
			lost.gens[i], found = v, true
		}
	}
	if found && !all {
		return lost
	}
	return taken
}

// create writes f's parameters and generation unless the name holds a
// filter already, and checks that one's parameters against f's: when they
// match, f takes its generation. It reports whether it wrote them.
func (f *Filter) create(ctx context.Context) (bool, error) {
	res, err := createScript.Run(ctx, f.c, []string{f.name}, f.p.fields(f.gen)...).Result()
	if err != nil {
		return false, f.wrap("create", f.name, err)
	}
	if n, ok := res.(int64); ok && n == 1 {
		return true, nil
	}
	h, err := redisx.Fields(res)
	if err != nil {
		return false, f.wrap("create", f.name, err)
	}
	p, gen, err := parseParams(h)
	if err != nil {
		return false, fmt.Errorf("%w: %q: %v", ErrNotFilter, f.name, err)
	}
	if p != f.p {
		return false, fmt.Errorf("%w: %q has %s; asked for %s", ErrMismatch, f.name, p.String(), f.p.String())
	}
	f.gen = gen
	return false, nil
}

// allocate makes the shards of a filter just created at their full length.
func (f *Filter) allocate(ctx context.Context) error {
	cmds := make([]*redis.Cmd, len(f.bits))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := range f.bits {
			cmds[i] = allocScript.Eval(ctx, pipe, []string{f.bits[i], f.gens[i]}, f.payloadLen(), f.gen)
		}
		return nil
	})
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return f.wrap("make", f.bits[i], err)
		}
	}
	return nil
}

// deleteLost deletes what is left of a lost filter: the keys of shard i
// when its generation is gens[i] (gen when gens is nil) or absent, then the
// parameters when their generation is gen. Keys of a filter made since,
// with another generation, stay.
func (f *Filter) deleteLost(ctx context.Context, gen string, gens []string) error {
	for i := range f.bits {
		want := gen
		if gens != nil {
			want = gens[i]
		}
		if err := delShardScript.Run(ctx, f.c, []string{f.bits[i], f.gens[i], f.counts[i]}, want).Err(); err != nil {
			return f.wrap("delete the lost", f.bits[i], err)
		}
	}
	if gen == "" {
		return nil
	}
	if err := delParamsScript.Run(ctx, f.c, []string{f.name}, gen).Err(); err != nil {
		return f.wrap("delete the lost", f.name, err)
	}
	return nil
}

// Delete removes the filter from Redis: its parameters first, so that no
// process opens it half deleted, then its shards. Only keys of the handle's
// filter are deleted: a filter made under the name since (ErrRecreated)
// stays. Handles on the filter get ErrLost or ErrRecreated from then on.
func (f *Filter) Delete(ctx context.Context) error {
	if err := delParamsScript.Run(ctx, f.c, []string{f.name}, f.gen).Err(); err != nil {
		return f.wrap("delete", f.name, err)
	}
	return f.deleteLost(ctx, "", slices.Repeat([]string{f.gen}, len(f.bits)))
}

// shardWait is how long New and Open wait for shards that are missing: the
// process that made the filter may be making them.
const shardWait = 2 * time.Second

// checkShards checks that every shard is a string of its payload's length
// with f's generation, waiting up to shardWait for missing ones.
func (f *Filter) checkShards(ctx context.Context) error {
	deadline := time.Now().Add(shardWait)
	for {
		lens := make([]*redis.IntCmd, len(f.bits))
		gens := make([]*redis.StringCmd, len(f.bits))
		_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for i := range f.bits {
				lens[i] = pipe.StrLen(ctx, f.bits[i])
				gens[i] = pipe.Get(ctx, f.gens[i])
			}
			return nil
		})
		missing := -1
		for i := range f.bits {
			n, err := lens[i].Result()
			if err != nil {
				return f.wrap("check", f.bits[i], err)
			}
			gen, err := gens[i].Result()
			if err != nil && err != redis.Nil {
				return f.wrap("check", f.gens[i], err)
			}
			switch {
			case n == 0 || err == redis.Nil:
				if missing < 0 {
					missing = i
				}
			case gen != f.gen:
				return fmt.Errorf("%w: shard %q of %q belongs to another filter (generation %s, want %s)", ErrCorrupt, f.bits[i], f.name, gen, f.gen)
			case uint64(n) != f.payloadLen():
				return fmt.Errorf("%w: %q is %d bytes, want %d", ErrCorrupt, f.bits[i], n, f.payloadLen())
			}
		}
		if missing < 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: shard %q of %q is missing (Redis restarted without its data, or evicted or deleted it); with Recreate, New or Restore makes the filter anew", ErrLost, f.bits[missing], f.name)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisfilter: open %q: %w", f.name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
