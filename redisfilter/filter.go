package redisfilter

// The handle: New and Open, the filter's keys, and where a key's bits lie.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/redis/go-redis/v9"
)

// A Filter is a handle on a filter in Redis. It is safe for concurrent use
// by many goroutines, as its client is; any number of processes may use the
// same filter at once.
type Filter struct {
	c      redis.UniversalClient
	name   string
	p      params
	gen    string        // the filter's generation
	router *bloom.Filter // nil with one shard
	bits   []string      // shard i's string
	counts []string      // shard i's count of new keys
	gens   []string      // shard i's generation
	loaded atomic.Bool   // the scripts are known to be loaded
	batch  int
}

// New opens the filter called name, making it when it does not exist yet,
// for capacity keys at false-positive rate fpRate, in as few shards as keep
// each at most MaxShardBits bits. It is NewWithConfig with only Capacity and
// FPRate set; see there.
func New(ctx context.Context, c redis.UniversalClient, name string, capacity uint64, fpRate float64) (*Filter, error) {
	return NewWithConfig(ctx, c, name, Config{Capacity: capacity, FPRate: fpRate})
}

// NewWithConfig opens the filter called name, making it when it does not
// exist yet. When it exists with the parameters cfg gives, it is opened as
// Open does, so every process of a fleet may call NewWithConfig with the
// same arguments; with other parameters the error wraps ErrMismatch. A name
// that holds something else (a list, a foreign hash) gives ErrNotFilter,
// shard keys that hold data while the filter does not exist give ErrExists,
// and nothing is written in either case.
//
// Each shard is sized by bloom.Optimal for ceil(Capacity/Shards) keys at
// FPRate, as the edge service sizes its shards. Arguments out of range give
// an error naming them before Redis is asked anything.
func NewWithConfig(ctx context.Context, c redis.UniversalClient, name string, cfg Config) (*Filter, error) {
	p, err := sized(cfg)
	if err == nil {
		err = checkName(name)
	}
	if err != nil {
		return nil, err
	}
	f := newFilter(c, name, p)
	for range 3 {
		f.gen = newGeneration()
		if err := f.checkFree(ctx, false); err != nil {
			var lost *lostError
			if !cfg.Recreate || !errors.As(err, &lost) {
				return nil, err
			}
			if err := f.deleteLost(ctx, "", lost.gens); err != nil {
				return nil, err
			}
			continue
		}
		created, err := f.create(ctx) // on a filter made already, sets f.gen to its generation
		if err != nil {
			return nil, err
		}
		if created {
			if err := f.allocate(ctx); err != nil {
				return nil, err
			}
		}
		err = f.checkShards(ctx)
		if err == nil {
			return f, nil
		}
		if !cfg.Recreate || !errors.Is(err, ErrLost) {
			return nil, err
		}
		if err := f.deleteLost(ctx, f.gen, nil); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: %q was lost again while it was being made anew", ErrLost, name)
}

func newFilter(c redis.UniversalClient, name string, p params) *Filter {
	f := &Filter{c: c, name: name, p: p, batch: 1000}
	if p.shards > 1 {
		f.router = snapshot.Router(p.shards)
	}
	f.bits = make([]string, p.shards)
	f.counts = make([]string, p.shards)
	f.gens = make([]string, p.shards)
	for i := range f.bits {
		f.bits[i] = name + ":" + strconv.Itoa(i)
		// The count shares the slot of the bits: through the name's hash
		// tag when it has one, else through a tag that is the bits' key.
		if redisx.HashTag(name) != "" {
			f.counts[i] = f.bits[i] + ":n"
			f.gens[i] = f.bits[i] + ":g"
		} else {
			f.counts[i] = "{" + f.bits[i] + "}:n"
			f.gens[i] = "{" + f.bits[i] + "}:g"
		}
	}
	return f
}

// Open opens the filter called name, which must exist: its error wraps
// ErrNotFound when it does not, and ErrNotFilter when the name holds
// something else.
func Open(ctx context.Context, c redis.UniversalClient, name string) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h, err := c.HGetAll(ctx, name).Result()
	if err != nil {
		return nil, (&Filter{name: name}).wrap("open", name, err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	p, gen, err := parseParams(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotFilter, name, err)
	}
	f := newFilter(c, name, p)
	f.gen = gen
	if err := f.checkShards(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns the filter's name, the key of its parameters.
func (f *Filter) Name() string { return f.name }

// Shards returns the number of shards.
func (f *Filter) Shards() int { return f.p.shards }

// ShardBits returns m, the number of bits of each shard.
func (f *Filter) ShardBits() uint64 { return f.p.m }

// NumBits returns the number of bits of all shards together.
func (f *Filter) NumBits() uint64 { return f.p.m * uint64(f.p.shards) }

// NumHashes returns k, the number of hash functions.
func (f *Filter) NumHashes() uint32 { return f.p.k }

// Seed returns the hash seed of the shards.
func (f *Filter) Seed() uint64 { return f.p.seed }

// Capacity returns the number of keys the filter was made for (the shards'
// capacity times their number), or 0 when it was restored from a filter of
// explicit size.
func (f *Filter) Capacity() uint64 { return f.p.capacity * uint64(f.p.shards) }

// TargetFPR returns the false-positive rate the filter was made for, or 0
// when it was restored from a filter of explicit size.
func (f *Filter) TargetFPR() float64 { return f.p.fpRate }

// Keys returns the Redis keys of the filter: its parameters, then the bits,
// the count and the generation of each shard.
func (f *Filter) Keys() []string {
	keys := []string{f.name}
	for i := range f.bits {
		keys = append(keys, f.bits[i], f.counts[i], f.gens[i])
	}
	return keys
}

// shard returns the shard of key.
func (f *Filter) shard(key string) int {
	if f.router == nil {
		return 0
	}
	return snapshot.Route(f.router, key)
}

// appendOffsets appends the Redis offsets of key's k bits in its shard.
func (f *Filter) appendOffsets(dst []any, key string) []any {
	var pos [bloom.MaxHashes]uint64
	for _, i := range bloom.AppendLocations(pos[:0], []byte(key), f.p.m, f.p.k, f.p.seed) {
		// Bit i of the format is bit i%8 from the least significant of
		// byte i/8; Redis counts from the most significant.
		dst = append(dst, i^7)
	}
	return dst
}

// scriptArgs starts the arguments of a script call for n keys (see
// checkShard).
func (f *Filter) scriptArgs(n int) []any {
	return append(make([]any, 0, 4+n*int(f.p.k)), f.payloadLen(), f.p.k, f.gen, f.maxCount())
}

// maxCount is the largest count a shard may hold, that of the decoders.
func (f *Filter) maxCount() uint64 { return bloom.MaxCountPerBit * f.p.m }

// scriptKeys returns the keys of a script call on shard sh: its bits,
// generation and count, all in one Cluster slot.
func (f *Filter) scriptKeys(sh int) []string {
	return []string{f.bits[sh], f.gens[sh], f.counts[sh]}
}

// payloadLen is the length of a shard's payload in the portable format.
func (f *Filter) payloadLen() uint64 { return 8 * ((f.p.m + 63) / 64) }
