package snapshot

import (
	"slices"
	"sync"

	"github.com/edgebloom/edgebloom/bloom"
)

// Batches: a Sharded's AddMany and HasMany take the keys a chunk at a
// time, route each key, group the chunk's keys by shard (a counting sort
// that keeps their order within a shard), run each shard's own batch
// (bloom.Filter's AddMany or HasMany, which overlaps the cache misses of
// its keys) on its group, and put the answers back in key order. Beside
// what one bloom.Filter's batch of the same keys costs, a key costs its
// routing hash and two copies; its shard's words are as far from the
// others as in one filter of the same size.

// chunk is the keys routed and grouped at once: at 4 shards each shard's
// batch takes about 512 keys, and at the service's 64 about 32, the group
// bloom's batches hash before they probe.
const chunk = 2048

// A scratch holds a batch's groups, kept between batches in a pool.
type scratch[K string | []byte] struct {
	shard [chunk]uint32 // the shard of each key of the chunk
	keys  [chunk]K      // the chunk's keys, grouped by shard
	at    [chunk]uint16 // for each of keys, its index in the chunk
	res   [chunk]bool   // a shard's answers
	// next counts each shard's keys, then is where its group's next key
	// goes; every entry is 0 between chunks.
	next    []uint32
	touched []uint32 // the chunk's shards, in the order of their first key
	begin   []uint32 // where each touched shard's group begins
}

var (
	stringScratch = sync.Pool{New: func() any { return new(scratch[string]) }}
	bytesScratch  = sync.Pool{New: func() any { return new(scratch[[]byte]) }}
)

// many runs a batch of keys through run, each shard's batch of its keys,
// and appends the answers to dst in key order.
func many[K string | []byte](s *Sharded, keys []K, dst []bool, pool *sync.Pool,
	route func(keys []K, seed, m uint64, out []uint32), run func(*bloom.Filter, []K, []bool) []bool) []bool {
	base := len(dst)
	dst = slices.Grow(dst, len(keys))[:base+len(keys)]
	if len(keys) == 0 {
		return dst
	}
	sc := pool.Get().(*scratch[K])
	if len(sc.next) < len(s.Shards) {
		sc.next = make([]uint32, len(s.Shards))
	}
	seed, m := s.Router.Seed(), s.Router.NumBits()
	for off := 0; off < len(keys); off += chunk {
		part := keys[off:min(off+chunk, len(keys))]
		sc.touched = sc.touched[:0]
		route(part, seed, m, sc.shard[:len(part)])
		for _, sh := range sc.shard[:len(part)] {
			if sc.next[sh] == 0 {
				sc.touched = append(sc.touched, sh)
			}
			sc.next[sh]++
		}
		sc.begin = sc.begin[:0]
		var at uint32
		for _, sh := range sc.touched {
			n := sc.next[sh]
			sc.next[sh] = at
			sc.begin = append(sc.begin, at)
			at += n
		}
		for i, k := range part {
			p := sc.next[sc.shard[i]]
			sc.keys[p], sc.at[p] = k, uint16(i)
			sc.next[sc.shard[i]] = p + 1
		}
		out := dst[base+off:]
		for j, sh := range sc.touched {
			b, e := sc.begin[j], sc.next[sh]
			sc.next[sh] = 0
			for q, r := range run(s.Shards[sh], sc.keys[b:e], sc.res[:0]) {
				out[sc.at[int(b)+q]] = r
			}
		}
	}
	clear(sc.keys[:min(len(keys), chunk)]) // the pool keeps no key alive
	pool.Put(sc)
	return dst
}

// routeStrings writes the shard of each of keys, of m shards routed
// under seed, to out.
func routeStrings(keys []string, seed, m uint64, out []uint32) {
	for i, k := range keys {
		out[i] = uint32(routeOf(routeSum(k, seed), m))
	}
}

// routeBytes is routeStrings for byte slices.
func routeBytes(keys [][]byte, seed, m uint64, out []uint32) {
	for i, k := range keys {
		out[i] = uint32(routeOf(xxh64(k, seed), m))
	}
}

// AddMany adds keys in order and appends to dst whether each was new, as
// Add reports it, and returns the extended slice: the answers of a loop of
// Add calls (a key that appears twice is new at most the first time), at
// about the cost of one bloom.Filter's AddMany of the same keys. It
// allocates only when dst lacks room.
func (s *Sharded) AddMany(keys [][]byte, dst []bool) []bool {
	return many(s, keys, dst, &bytesScratch, routeBytes, (*bloom.Filter).AddMany)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (s *Sharded) AddManyString(keys []string, dst []bool) []bool {
	return many(s, keys, dst, &stringScratch, routeStrings, (*bloom.Filter).AddManyString)
}

// HasMany appends to dst whether each key is probably present, as Has
// reports it, and returns the extended slice. Any number of goroutines may
// run it at once while nobody writes.
func (s *Sharded) HasMany(keys [][]byte, dst []bool) []bool {
	return many(s, keys, dst, &bytesScratch, routeBytes, (*bloom.Filter).HasMany)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (s *Sharded) HasManyString(keys []string, dst []bool) []bool {
	return many(s, keys, dst, &stringScratch, routeStrings, (*bloom.Filter).HasManyString)
}
