package main

// build --shards: a filter split into shards as the edge service splits
// one (snapshot.Route picks a key's shard; each shard is made for
// ceil(n / shards) keys at the rate), written as a sharded snapshot, which
// push publishes to a service filter of as many shards.

import (
	"bytes"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

type shardedFilter struct {
	snapshot.Sharded
	// per shard, the keys of one AddMany and where each came from
	keys  [][][]byte
	index [][]int
	fresh []bool
}

func newShardedFilter(n uint64, p float64, shards int) (*shardedFilter, error) {
	s := &shardedFilter{Sharded: snapshot.Sharded{Router: snapshot.Router(shards), Shards: make([]*bloom.Filter, shards)},
		keys: make([][][]byte, shards), index: make([][]int, shards)}
	per := (n + uint64(shards) - 1) / uint64(shards)
	for i := range s.Shards {
		f, err := bloom.New(per, p)
		if err != nil {
			return nil, err
		}
		s.Shards[i] = f
	}
	return s, nil
}

func (s *shardedFilter) shard(key []byte) *bloom.Filter {
	return s.Shards[snapshot.Route(s.Router, string(key))]
}

func (s *shardedFilter) Add(key []byte) bool { return s.shard(key).Add(key) }
func (s *shardedFilter) Has(key []byte) bool { return s.shard(key).Has(key) }

// AddMany adds keys shard by shard, each shard's in their order, and
// answers in the order given.
func (s *shardedFilter) AddMany(keys [][]byte, dst []bool) []bool {
	for i := range s.keys {
		s.keys[i], s.index[i] = s.keys[i][:0], s.index[i][:0]
	}
	for j, k := range keys {
		i := snapshot.Route(s.Router, string(k))
		s.keys[i] = append(s.keys[i], k)
		s.index[i] = append(s.index[i], j)
	}
	dst = append(dst[:0], make([]bool, len(keys))...)
	for i, f := range s.Shards {
		s.fresh = f.AddMany(s.keys[i], s.fresh[:0])
		for j, fresh := range s.fresh {
			dst[s.index[i][j]] = fresh
		}
	}
	return dst
}

func (s *shardedFilter) sum(of func(f *bloom.Filter) uint64) (n uint64) {
	for _, f := range s.Shards {
		n += of(f)
	}
	return n
}

func (s *shardedFilter) Count() uint64   { return s.sum((*bloom.Filter).Count) }
func (s *shardedFilter) NumBits() uint64 { return s.sum((*bloom.Filter).NumBits) }
func (s *shardedFilter) SetBits() uint64 { return s.sum((*bloom.Filter).SetBits) }

func (s *shardedFilter) EstimatedCount() (n float64) {
	for _, f := range s.Shards {
		n += f.EstimatedCount()
	}
	return n
}

// EstimatedFPR is the shards' mean: a key never added goes to one shard,
// each as likely.
func (s *shardedFilter) EstimatedFPR() (p float64) {
	for _, f := range s.Shards {
		p += f.EstimatedFPR() / float64(len(s.Shards))
	}
	return p
}

func (s *shardedFilter) OverCapacity() bool {
	for _, f := range s.Shards {
		if f.OverCapacity() {
			return true
		}
	}
	return false
}

// WriteTo writes the sharded snapshot.
func (s *shardedFilter) WriteTo(w io.Writer) (int64, error) {
	b, err := s.Sharded.MarshalBinary()
	if err != nil {
		return 0, err
	}
	return io.Copy(w, bytes.NewReader(b))
}
