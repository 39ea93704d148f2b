//go:build js && wasm

package main

import (
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/internal/engine"
)

// Sharded filters: the npm module's ShardedBloomFilter is a router and its
// shards, each a classic filter with a handle of its own; abi.OpRouted
// makes of them one handle that the keys export takes (with abi.KeyRouted),
// so that a batch is routed and probed here, in one call a group as one
// filter's batch is, not two calls a key from JS.

// A routed is a sharded filter: what engine.Route made of its filters,
// and their handles, router first.
type routed struct {
	r       any
	handles []int32
}

// sets[h-1] is the sharded filter with handle h, empty once dropped. A
// handle is never given again (a sharded filter whose shard was freed keeps
// answering ERR_FREED, never another filter's answers): a dropped one keeps
// its 40 bytes here.
var sets []routed

// routedOp makes a sharded filter of the b handles at scratch[a:] (c 0),
// drops sharded filter h (c 1), makes the router of a shards (c 2), or drops
// every sharded filter that holds filter h, which is being freed (c 3, from
// abi.OpFree), so that it answers ERR_FREED and keeps no shard alive.
func routedOp(h, a, b, c int32) int32 {
	switch c {
	case 1:
		if h >= 1 && int(h) <= len(sets) {
			sets[h-1] = routed{}
		}
		return 0
	case 2:
		if a < 2 || a > abi.MaxShards {
			return fail(abi.ErrArg, "edgebloom: a router is of 2 to 65536 shards")
		}
		f, _ := bloom.NewWithSeed(uint64(a), 1, abi.RouteSeed)
		return register(f)
	case 3:
		for i := range sets {
			for _, g := range sets[i].handles {
				if g == h {
					sets[i] = routed{}
				}
			}
		}
		return 0
	}
	if b < 3 || uint64(uint32(a))+4*uint64(uint32(b)) > uint64(len(scratch)) {
		return fail(abi.ErrArg, "edgebloom: batch outside the scratch buffer")
	}
	handles := append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(&scratch[a])), b)...)
	var r any
	for _, g := range handles {
		f := lookup(g)
		if f == nil {
			return fail(abi.ErrFreed, "edgebloom: the filter was freed")
		}
		if r = engine.Route(r, f); r == nil {
			return fail(abi.ErrKind, "edgebloom: a sharded filter is a router of m = s and s classic shards of one seed")
		}
	}
	sets = append(sets, routed{r, handles})
	return int32(len(sets))
}
