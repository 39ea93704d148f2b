package snapshot

import (
	"encoding/binary"
	"iter"
	"maps"
	"math/bits"
	"slices"

	"github.com/edgebloom/edgebloom/internal/abi"
)

// A DeltaMerger joins consecutive deltas of one filter, given in order,
// into the one delta from the first one's cursor to the last one's: what a
// copy would set applying them one after the other. It holds, for each
// shard they change, a bitset of m bits into which each delta's positions
// are set as they are read (a position set twice is held once), so what
// it holds is at most MergeBytes(m, shards) whatever the number of deltas
// and of their positions; each delta it is given may be dropped once Add
// returns. It merges Rice-coded records (version 2) only: a record that
// carries its shard whole, or a delta of version 1, is refused.
type DeltaMerger struct {
	d      *Delta // the header of the deltas, from the first
	shards map[uint32]*mergedShard
}

// A mergedShard is a shard's record so far: its first From and its
// latest To, epoch and count, and the bits set since From.
type mergedShard struct {
	rec  DeltaRecord
	bits []uint64
}

// MergeBytes bounds what a DeltaMerger of deltas of shards shards of m bits
// each holds, beside the delta it is reading: a bitset of each shard.
func MergeBytes(m uint64, shards int) uint64 {
	return uint64(shards) * 8 * ((m + 63) / 64)
}

// MergedDeltaBytes bounds the delta Delta returns for shards shards of m
// bits: its header and trailer, and each shard's record of at most m
// positions, Rice-coded (with the best parameter, n positions below m take
// under n·(log2(m/n) + 3) bits, at most 3m).
func MergedDeltaBytes(m uint64, shards int) uint64 {
	return deltaHeaderSize + deltaTrailer + uint64(shards)*(deltaRecordHeader+2+(3*m+7)/8)
}

// Add merges the next delta. Its shards, m, k and generation must be the
// first one's, and each of its records must start where the shard's
// record so far ends (in the same epoch). After an error the merger holds
// part of the delta: it is to be dropped.
func (g *DeltaMerger) Add(data []byte) error {
	_, err := decodeDelta(data, func(d *Delta, rec *DeltaRecord) (func(uint64), error) {
		if g.d == nil {
			g.d = &Delta{Version: d.Version, Generation: d.Generation, Seed: d.Seed, M: d.M, K: d.K, Shards: d.Shards}
			g.shards = map[uint32]*mergedShard{}
		}
		if d.Generation != g.d.Generation || d.Seed != g.d.Seed || d.M != g.d.M || d.K != g.d.K || d.Shards != g.d.Shards {
			return nil, deltaError(ErrDeltaMismatch, "the deltas are not of one filter")
		}
		sh := g.shards[rec.Shard]
		switch {
		case sh == nil:
			sh = &mergedShard{rec: *rec, bits: make([]uint64, (d.M+63)/64)}
			g.shards[rec.Shard] = sh
		case rec.Epoch != sh.rec.Epoch || rec.From != sh.rec.To:
			return nil, deltaError(ErrDeltaMismatch, "shard %d's record starts at %d of epoch %d, not at %d of epoch %d", rec.Shard, rec.From, rec.Epoch, sh.rec.To, sh.rec.Epoch)
		default:
			sh.rec.To, sh.rec.Count = rec.To, rec.Count
		}
		return func(p uint64) { sh.bits[p/64] |= 1 << (p % 64) }, nil
	})
	return err
}

// Delta returns the merged delta: a record of each shard the deltas
// changed, Rice-coded from its bitset, which is never listed. Without any
// delta added, it is nil.
func (g *DeltaMerger) Delta() []byte {
	if g.d == nil {
		return nil
	}
	order := slices.Sorted(maps.Keys(g.shards))
	// The size first, so that the delta is written into one allocation.
	type shape struct{ n, last uint64 }
	shapes := make([]shape, len(order))
	size := deltaHeaderSize + deltaTrailer
	for j, i := range order {
		sh := g.shards[i]
		for w, word := range sh.bits {
			if word != 0 {
				shapes[j].n += uint64(bits.OnesCount64(word))
				shapes[j].last = uint64(w)*64 + uint64(63-bits.LeadingZeros64(word))
			}
		}
		size += deltaRecordHeader + riceBody(setBits(sh.bits), shapes[j].n, shapes[j].last)
	}
	out := make([]byte, 0, size)
	out = appendDeltaHeader(out, deltaVersion, g.d.Generation, g.d.Seed, g.d.M, g.d.K, g.d.Shards, uint32(len(order)))
	for j, i := range order {
		sh := g.shards[i]
		at := len(out)
		// The header with a body length of 0, set once the body is written.
		out = appendRecordBody(out, sh.rec, shapes[j].n, nil)
		out = appendRiceSeq(out, setBits(sh.bits), shapes[j].n, shapes[j].last)
		binary.LittleEndian.PutUint32(out[at+abi.DeltaRecordAtBytes:], uint32(len(out)-at-deltaRecordHeader))
	}
	return AppendDeltaTrailer(out)
}

// setBits yields the positions of the bits set in b, increasing.
func setBits(b []uint64) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for w, word := range b {
			for word != 0 {
				if !yield(uint64(w)*64 + uint64(bits.TrailingZeros64(word))) {
					return
				}
				word &= word - 1
			}
		}
	}
}
