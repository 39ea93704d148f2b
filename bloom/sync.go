package bloom

import (
	"io"
	"math/bits"
)

// A SyncFilter is a classic Bloom filter for concurrent writers: any number
// of goroutines may call Add, AddString, Has, HasString and the statistics
// at once, without locks. It sets bits by atomic OR on 64-bit words, which
// costs more than Filter's plain OR (one locked instruction a bit on amd64,
// and a barrier that keeps the next key's loads from starting early), so
// use it only where several goroutines add.
//
// It has the same bits and the same format as Filter: for the same keys,
// parameters and seed, its encoding is the classic kind's, byte for byte,
// and Decode, DecodeSync, the npm module and the edgebloom CLI read either.
//
// What concurrent Adds guarantee: once they have returned, every key added
// is present, and the bits are those a Filter gets from the same keys added
// in any order. When several goroutines add the same new key at once, at
// least one of them gets true (unless other keys set all its bits
// meanwhile, which is a false positive as in Filter), and more than one may;
// Count counts every true. Union and Intersect may run while others Add
// and Has (each word is combined atomically; Count then becomes the
// estimate). Clear, UnmarshalBinary and ReadFrom must not overlap other
// calls; WriteTo and MarshalBinary may, and then hold each word as it was
// when read.
//
// The zero value is not usable; make one with NewSync, NewSyncWithSize,
// NewSyncWithSeed, NewSyncFrom or DecodeSync.
type SyncFilter struct {
	f Filter // first: its count must be 64-bit aligned on 32-bit platforms
}

// NewSync returns an empty SyncFilter sized by Optimal for capacity keys at
// false-positive rate fpRate, as New does. It returns an error naming the
// argument when either is out of range; nothing is allocated in that case.
func NewSync(capacity uint64, fpRate float64) (*SyncFilter, error) {
	f, err := New(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	return &SyncFilter{f: *f}, nil
}

// NewSyncWithSize returns an empty SyncFilter with m bits and k hash
// functions. It returns an error naming the argument when m is 0 or above
// MaxBits, or k is 0 or above MaxHashes.
func NewSyncWithSize(m uint64, k uint32) (*SyncFilter, error) { return NewSyncWithSeed(m, k, 0) }

// NewSyncWithSeed is NewSyncWithSize with a hash seed other than the default
// 0, as NewWithSeed.
func NewSyncWithSeed(m uint64, k uint32, seed uint64) (*SyncFilter, error) {
	f, err := NewWithSeed(m, k, seed)
	if err != nil {
		return nil, err
	}
	return &SyncFilter{f: *f}, nil
}

// NewSyncFrom returns a SyncFilter holding a copy of f: its bits,
// parameters, seed and count. f must not change meanwhile.
func NewSyncFrom(f *Filter) *SyncFilter { return &SyncFilter{f: *f.clone()} }

// Snapshot returns a Filter holding a copy of s. Adds that run meanwhile
// may or may not be in it, each bit as it was when its word was read.
func (s *SyncFilter) Snapshot() *Filter { return s.f.clone() }

// Add adds key and reports whether it was new, as Filter.Add does; see
// SyncFilter for what concurrent Adds of one key report.
func (s *SyncFilter) Add(key []byte) bool { return s.f.addAtomic(sum(key, s.f.seed)) }

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (s *SyncFilter) AddString(key string) bool { return s.f.addAtomic(sumString(key, s.f.seed)) }

// Has reports whether key is probably in the filter. It never returns false
// for a key whose Add returned before Has was called.
func (s *SyncFilter) Has(key []byte) bool { return s.f.hasAtomic(sum(key, s.f.seed)) }

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (s *SyncFilter) HasString(key string) bool { return s.f.hasAtomic(sumString(key, s.f.seed)) }

// hasAtomic is has with atomic loads.
func (f *Filter) hasAtomic(h uint64) bool {
	words, m, k := f.words, f.m, uint64(f.k)
	x, y := start(h, m)
	for i := uint64(1); ; i++ {
		if load64(&words[x>>6])&(1<<(x&63)) == 0 {
			return false
		}
		if i == k {
			return true
		}
		x, y = step(x, y, i, m)
	}
}

// addAtomic is add with atomic loads and ORs, for Adds that run in
// parallel: SyncFilter's, WindowFilter's and FileFilter's.
func (f *Filter) addAtomic(h uint64) bool {
	// Load every word first and note in missing which of the k bits are
	// unset, without branching on them, so the CPU overlaps the k cache
	// misses; then set only the missing bits. A key already present, most
	// of a crawler's traffic, stops there and writes nothing: no locked
	// instruction, and no write to a page of a mapped file.
	words, m, k := f.words, f.m, uint64(f.k)
	var pos [MaxHashes]uint64
	var missing uint64 // bit i for pos[i]
	x, y := start(h, m)
	for i := uint64(0); ; {
		pos[i&(MaxHashes-1)] = x
		missing |= (^load64(&words[x>>6]) >> (x & 63) & 1) << (i & 63)
		if i++; i == k {
			break
		}
		x, y = step(x, y, i, m)
	}
	if missing == 0 {
		return false
	}
	// Seeing a bit unset already makes the key new, whoever sets the bit,
	// so the OR's old value is not needed: on amd64 that makes it one LOCK
	// OR rather than a compare-and-swap loop.
	for ; missing != 0; missing &= missing - 1 {
		x := pos[bits.TrailingZeros64(missing)&(MaxHashes-1)]
		or64(&words[x>>6], 1<<(x&63))
	}
	add64(&f.count, 1)
	return true
}

// Locations returns the k bit positions of key, in probe order.
func (s *SyncFilter) Locations(key []byte) []uint64 { return s.f.Locations(key) }

// NumBits returns m, the number of bits.
func (s *SyncFilter) NumBits() uint64 { return s.f.m }

// NumHashes returns k, the number of hash functions.
func (s *SyncFilter) NumHashes() uint32 { return s.f.k }

// Seed returns the hash seed.
func (s *SyncFilter) Seed() uint64 { return s.f.seed }

// Count returns the number of Add calls that returned true. After Union or
// Intersect it is replaced by EstimatedCount, rounded.
func (s *SyncFilter) Count() uint64 { return s.f.Count() }

// Capacity returns the capacity the filter was made for by NewSync, or 0
// when it was made from an explicit size.
func (s *SyncFilter) Capacity() uint64 { return s.f.capacity }

// TargetFPR returns the false-positive rate the filter was made for by
// NewSync, or 0 when it was made from an explicit size.
func (s *SyncFilter) TargetFPR() float64 { return s.f.fpRate }

// SetBits returns the number of bits set. It counts all m bits, so it takes
// time proportional to m.
func (s *SyncFilter) SetBits() uint64 { return s.f.SetBits() }

// FillRatio returns the fraction of bits set, SetBits/NumBits.
func (s *SyncFilter) FillRatio() float64 { return s.f.FillRatio() }

// EstimatedCount estimates the number of distinct keys added from the
// number of bits set, as Filter.EstimatedCount does.
func (s *SyncFilter) EstimatedCount() float64 { return s.f.EstimatedCount() }

// EstimatedFPR returns the false-positive rate at the current fill,
// FillRatio^k.
func (s *SyncFilter) EstimatedFPR() float64 { return s.f.EstimatedFPR() }

// OverCapacity reports whether the filter holds more keys than it was made
// for, as Filter.OverCapacity does.
func (s *SyncFilter) OverCapacity() bool { return s.f.OverCapacity() }

// Clear removes every key and resets Count. It must not overlap other calls.
func (s *SyncFilter) Clear() { s.f.Clear() }

// Equal reports whether s and o have the same parameters and the same bits.
// Counts and targets are not compared.
func (s *SyncFilter) Equal(o *SyncFilter) bool {
	if s.f.compatible(&o.f) != nil {
		return false
	}
	for i := range s.f.words {
		if load64(&s.f.words[i]) != load64(&o.f.words[i]) {
			return false
		}
	}
	return true
}

// Union adds every key of o to s, word by word with atomic OR, so it may run
// while others Add to either. It returns an error wrapping ErrIncompatible,
// and leaves s unchanged, when m, k or the seed differ.
func (s *SyncFilter) Union(o *SyncFilter) error {
	if err := s.f.compatible(&o.f); err != nil {
		return err
	}
	for i := range s.f.words {
		or64(&s.f.words[i], load64(&o.f.words[i]))
	}
	s.f.recount()
	return nil
}

// Intersect keeps in s only the bits also set in o, word by word with atomic
// AND. It returns an error wrapping ErrIncompatible, and leaves s unchanged,
// when m, k or the seed differ.
func (s *SyncFilter) Intersect(o *SyncFilter) error {
	if err := s.f.compatible(&o.f); err != nil {
		return err
	}
	for i := range s.f.words {
		and64(&s.f.words[i], load64(&o.f.words[i]))
	}
	s.f.recount()
	return nil
}

// EncodedSize returns the length of the encoding MarshalBinary produces.
func (s *SyncFilter) EncodedSize() uint64 { return s.f.EncodedSize() }

// WriteTo writes the filter's encoding to w, the classic kind's (see
// docs/format.md). It implements io.WriterTo.
func (s *SyncFilter) WriteTo(w io.Writer) (int64, error) { return s.f.WriteTo(w) }

// MarshalBinary returns the filter's encoding, which is a Filter's with the
// same bits. It implements encoding.BinaryMarshaler.
func (s *SyncFilter) MarshalBinary() ([]byte, error) { return s.f.MarshalBinary() }

// UnmarshalBinary replaces s with the classic filter encoded in data, as
// Filter.UnmarshalBinary does. It must not overlap other calls.
func (s *SyncFilter) UnmarshalBinary(data []byte) error { return s.f.UnmarshalBinary(data) }

// ReadFrom replaces s with the classic filter read from r, as
// Filter.ReadFrom does. It must not overlap other calls.
func (s *SyncFilter) ReadFrom(r io.Reader) (int64, error) { return s.f.ReadFrom(r) }

// DecodeSync reads one classic filter from r into a new SyncFilter, with the
// bound maxBits and the guarantees of Decode.
func DecodeSync(r io.Reader, maxBits uint64) (*SyncFilter, error) {
	f, err := Decode(r, maxBits)
	if err != nil {
		return nil, err
	}
	return &SyncFilter{f: *f}, nil
}
