package snapshot

import (
	"bytes"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
)

// Sharded is a filter split into shards, as the edge service keeps a large
// filter: each key lives in the one shard Route gives it, and the shards
// are classic filters of equal size. LoadSharded reads one from the
// service's snapshot (or redisfilter's); NewSharded makes an empty one
// with the shards the service makes for the same parameters, so that the
// same keys give the same bytes.
//
// It answers as one bloom.Filter of the same keys would, with the same
// methods: Add and Has, their batches, the statistics (summed over the
// shards, as the service's GET of the filter and the npm module's
// ShardedBloomFilter.stats() total them), MarshalBinary and Union. Like a
// bloom.Filter it is for one writer: any number of goroutines may call
// Has, the batches of Has and the statistics while nobody changes it.
//
// The zero value holds no shards: make one with NewSharded, LoadSharded or
// UnmarshalBinary.
type Sharded struct {
	Router *bloom.Filter
	Shards []*bloom.Filter
}

// NewSharded returns an empty filter of shards shards for capacity keys at
// false-positive rate fpRate, made as the edge service makes a filter of
// these parameters: each shard is bloom.New(ceil(capacity/shards), fpRate)
// and the router is Router(shards). Adding the keys the service was sent,
// in the same order, gives byte for byte the service's snapshot. It returns
// a *bloom.ArgError naming the argument when shards is not from 2 to
// MaxShards (one shard is a plain bloom.Filter: bloom.New), or when
// capacity or fpRate is out of bloom.New's range; nothing is allocated then.
func NewSharded(capacity uint64, fpRate float64, shards int) (*Sharded, error) {
	if shards < 2 || shards > MaxShards {
		return nil, &bloom.ArgError{Arg: "shards", Rule: "must be from 2 to 65536 (a filter of one shard is a bloom.Filter: bloom.New)"}
	}
	per := ShardCapacity(capacity, shards)
	if _, _, err := bloom.Optimal(per, fpRate); err != nil {
		return nil, err
	}
	s := &Sharded{Router: Router(shards), Shards: make([]*bloom.Filter, shards)}
	for i := range s.Shards {
		s.Shards[i], _ = bloom.New(per, fpRate) // Optimal accepted these
	}
	return s, nil
}

// ShardCapacity returns the capacity of each of shards shards of a filter
// of capacity keys, ceil(capacity/shards), as the edge service splits it.
// It panics if shards is less than 1.
func ShardCapacity(capacity uint64, shards int) uint64 {
	n := uint64(shards)
	q := capacity / n
	if capacity%n != 0 {
		q++
	}
	return q
}

// shardOf returns the shard of key.
func (s *Sharded) shardOf(key string) *bloom.Filter {
	return s.Shards[routeOf(routeSum(key, s.Router.Seed()), s.Router.NumBits())]
}

// Add adds key to its shard and reports whether it was new, as
// bloom.Filter's Add does: "if s.Add(url) { fetch(url) }".
func (s *Sharded) Add(key []byte) bool { return s.shardOf(string(key)).Add(key) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (s *Sharded) AddString(key string) bool { return s.shardOf(key).AddString(key) }

// Has reports whether key is probably in its shard. It never returns false
// for a key that was added.
func (s *Sharded) Has(key []byte) bool { return s.shardOf(string(key)).Has(key) }

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (s *Sharded) HasString(key string) bool { return s.shardOf(key).HasString(key) }

// NumBits returns the bits of all the shards together.
func (s *Sharded) NumBits() uint64 { return s.sum((*bloom.Filter).NumBits) }

// NumHashes returns k, the hash functions of each shard (the first's, as
// the npm module reports; the service's shards all have the same).
func (s *Sharded) NumHashes() uint32 { return s.Shards[0].NumHashes() }

// Seed returns the hash seed of the shards (the first's).
func (s *Sharded) Seed() uint64 { return s.Shards[0].Seed() }

// Count returns the sum of the shards' counts: the Add calls that returned
// true, or after Union the shards' estimates.
func (s *Sharded) Count() uint64 { return s.sum((*bloom.Filter).Count) }

// Capacity returns the sum of the shards' capacities: capacity rounded up
// to a multiple of the shards for a filter made by NewSharded, 0 when the
// shards were made from an explicit size.
func (s *Sharded) Capacity() uint64 { return s.sum((*bloom.Filter).Capacity) }

// TargetFPR returns the false-positive rate the shards were made for (the
// first's), or 0 when they were made from an explicit size.
func (s *Sharded) TargetFPR() float64 { return s.Shards[0].TargetFPR() }

// SetBits returns the number of bits set in all the shards. It takes time
// proportional to NumBits.
func (s *Sharded) SetBits() uint64 { return s.sum((*bloom.Filter).SetBits) }

// FillRatio returns the fraction of all the bits that is set.
func (s *Sharded) FillRatio() float64 { return float64(s.SetBits()) / float64(s.NumBits()) }

// EstimatedCount returns the sum of the shards' estimates of their
// distinct keys (bloom.Filter's EstimatedCount); +Inf when a shard has
// every bit set.
func (s *Sharded) EstimatedCount() float64 { return s.Stats().EstimatedCount }

// EstimatedFPR returns the false-positive rate at the current fill: a key
// never added goes to one shard, each as likely, so it is the mean of the
// shards' EstimatedFPR.
func (s *Sharded) EstimatedFPR() float64 { return s.Stats().EstimatedFPR }

// OverCapacity reports whether any shard holds more keys than it was made
// for (bloom.Filter's OverCapacity): its keys are then answered at a
// higher false-positive rate than the target.
func (s *Sharded) OverCapacity() bool {
	for _, f := range s.Shards {
		if f.OverCapacity() {
			return true
		}
	}
	return false
}

// Stats returns every statistic from one pass over each shard's bits,
// totalled as the methods of the same names total them.
func (s *Sharded) Stats() bloom.Stats {
	var t bloom.Stats
	for _, f := range s.Shards {
		st := f.Stats()
		t.Bits += st.Bits
		t.Count += st.Count
		t.SetBits += st.SetBits
		t.EstimatedCount += st.EstimatedCount // +Inf stays +Inf
		t.EstimatedFPR += st.EstimatedFPR / float64(len(s.Shards))
		t.Capacity += st.Capacity
		t.OverCapacity = t.OverCapacity || st.OverCapacity
	}
	t.Hashes, t.TargetFPR = s.NumHashes(), s.TargetFPR()
	t.FillRatio = float64(t.SetBits) / float64(t.Bits)
	return t
}

func (s *Sharded) sum(of func(*bloom.Filter) uint64) uint64 {
	var n uint64
	for _, f := range s.Shards {
		n += of(f)
	}
	return n
}

// Clear removes every key from every shard and resets the counts.
func (s *Sharded) Clear() {
	for _, f := range s.Shards {
		f.Clear()
	}
}

// Equal reports whether s and o have the same number of shards and equal
// shards (bloom.Filter's Equal: parameters and bits, not counts).
func (s *Sharded) Equal(o *Sharded) bool {
	if len(s.Shards) != len(o.Shards) || !s.Router.Equal(o.Router) {
		return false
	}
	for i, f := range s.Shards {
		if !f.Equal(o.Shards[i]) {
			return false
		}
	}
	return true
}

// Union adds every key of o to s, shard by shard. It returns an error
// wrapping bloom.ErrIncompatible, and leaves s unchanged, when the shard
// counts differ or a shard's m, k or seed differ from its peer's.
func (s *Sharded) Union(o *Sharded) error { return s.combine(o, (*bloom.Filter).Union) }

// Intersect keeps in s only the bits also set in o, shard by shard, with
// Union's errors.
func (s *Sharded) Intersect(o *Sharded) error { return s.combine(o, (*bloom.Filter).Intersect) }

func (s *Sharded) combine(o *Sharded, op func(f, g *bloom.Filter) error) error {
	if len(s.Shards) != len(o.Shards) {
		return formatError(bloom.ErrIncompatible, "%d shards and %d", len(s.Shards), len(o.Shards))
	}
	for i, f := range s.Shards {
		g := o.Shards[i]
		if f.NumBits() != g.NumBits() || f.NumHashes() != g.NumHashes() || f.Seed() != g.Seed() {
			return formatError(bloom.ErrIncompatible, "shard %d has m = %d, k = %d, seed %d; the other's m = %d, k = %d, seed %d",
				i, f.NumBits(), f.NumHashes(), f.Seed(), g.NumBits(), g.NumHashes(), g.Seed())
		}
	}
	for i, f := range s.Shards {
		if err := op(f, o.Shards[i]); err != nil {
			panic(err) // checked above
		}
	}
	return nil
}

// EncodedSize returns the length of the container MarshalBinary writes.
func (s *Sharded) EncodedSize() uint64 {
	n := uint64(HeaderSize(len(s.Shards)))
	for _, f := range s.Shards {
		n += f.EncodedSize()
	}
	return n
}

// MarshalBinary returns the container, byte for byte what LoadSharded read
// or the service's snapshot of the same shards: a copy kept in sync by
// ApplyDelta is saved this way. It implements encoding.BinaryMarshaler.
func (s *Sharded) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(s.EncodedSize()))
	if _, err := s.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteTo writes the container to w. It implements io.WriterTo.
func (s *Sharded) WriteTo(w io.Writer) (int64, error) {
	lengths := make([]uint64, len(s.Shards))
	for i, f := range s.Shards {
		lengths[i] = f.EncodedSize()
	}
	n, err := w.Write(AppendHeader(nil, lengths))
	total := int64(n)
	for _, f := range s.Shards {
		if err != nil {
			return total, err
		}
		var m int64
		m, err = f.WriteTo(w)
		total += m
	}
	return total, err
}

// UnmarshalBinary replaces s with the container in data, each shard of at
// most bloom.DefaultMaxBits bits, as LoadSharded reads it. On error s is
// unchanged. It implements encoding.BinaryUnmarshaler.
func (s *Sharded) UnmarshalBinary(data []byte) error {
	g, err := LoadSharded(data, bloom.DefaultMaxBits)
	if err != nil {
		return err
	}
	*s = *g
	return nil
}
