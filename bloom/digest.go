package bloom

// A Digest computes the hash that a filter takes of a key, from the key's
// bytes written in any number of pieces: for keys too long to hold in
// memory at once (the npm module hashes a key of more than 256 KiB this
// way, so its scratch buffer stays small). Make it with NewDigest and the
// filter's Seed, write the key's bytes, then pass Sum64 to the filter's
// AddDigest or HasDigest: the answer is that of Add or Has of the whole
// key.
//
// The zero value is not usable.
type Digest struct{ d *checksum }

// NewDigest returns an empty Digest for keys of filters of the given seed.
func NewDigest(seed uint64) *Digest { return &Digest{newSeededChecksum(seed)} }

// Write adds p to the key. It never fails.
func (d *Digest) Write(p []byte) (int, error) { return d.d.Write(p) }

// Sum64 returns the digest of the bytes written so far: XXH64 under the
// seed, as the filter computes it of a whole key.
func (d *Digest) Sum64() uint64 { return d.d.Sum64() }

// AddDigest adds the key whose digest is h (see Digest) and reports whether
// it was new, as Add does for the key itself.
func (f *Filter) AddDigest(h uint64) bool { return f.add(h) }

// HasDigest reports whether the key whose digest is h is probably present,
// as Has does for the key itself.
func (f *Filter) HasDigest(h uint64) bool { return f.has(h) }

// Seed returns the seed of the key hash.
func (f *CountingFilter) Seed() uint64 { return f.seed }

// AddDigest is Add for the key whose digest is h (see Digest).
func (f *CountingFilter) AddDigest(h uint64) bool { return f.add(h) }

// HasDigest is Has for the key whose digest is h (see Digest).
func (f *CountingFilter) HasDigest(h uint64) bool { return f.has(h) }

// Seed returns the seed of the key hash, shared by every layer or
// generation.
func (l *layers) Seed() uint64 { return l.seed }

// HasDigest is Has for the key whose digest is h (see Digest).
func (l *layers) HasDigest(h uint64) bool { return l.has(h) }

// AddDigest is Add for the key whose digest is h (see Digest).
func (s *ScalableFilter) AddDigest(h uint64) bool { return s.add(h) }

// AddDigest is Add for the key whose digest is h (see Digest).
func (w *WindowFilter) AddDigest(h uint64) bool { return w.add(h) }

// Seed returns 0: a split-block filter hashes with seed 0, as Parquet does.
func (f *BlockedFilter) Seed() uint64 { return 0 }

// AddDigest is Add for the key whose digest is h (see Digest). It spells
// out Add's lines rather than Add calling it: Go does not inline it, and
// Add would pay a call a key (see Add).
func (f *BlockedFilter) AddDigest(h uint64) bool {
	b := f.block(h)
	m0, m1, m2, m3 := masks(uint32(h))
	if missing(b, m0, m1, m2, m3) == 0 {
		return false
	}
	b[0], b[1], b[2], b[3] = b[0]|m0, b[1]|m1, b[2]|m2, b[3]|m3
	f.count++
	return true
}

// HasDigest is Has for the key whose digest is h (see Digest).
func (f *BlockedFilter) HasDigest(h uint64) bool {
	m0, m1, m2, m3 := masks(uint32(h))
	return missing(f.block(h), m0, m1, m2, m3) == 0
}
