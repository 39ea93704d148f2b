package bloom

// Seed returns the seed of the key hash.
func (f *CountingFilter) Seed() uint64 { return f.seed }

// Seed returns the seed of the key hash, shared by every layer or
// generation.
func (l *layers) Seed() uint64 { return l.seed }

// Seed returns 0: a split-block filter hashes with seed 0, as Parquet does.
func (f *BlockedFilter) Seed() uint64 { return 0 }

// addDigest is Add for the key whose digest is h. It spells out Add's
// lines rather than Add calling it: Go does not inline it, and Add would
// pay a call a key (see Add).
func (f *BlockedFilter) addDigest(h uint64) bool {
	b := f.block(h)
	m0, m1, m2, m3 := masks(uint32(h))
	if missing(b, m0, m1, m2, m3) == 0 {
		return false
	}
	b[0], b[1], b[2], b[3] = b[0]|m0, b[1]|m1, b[2]|m2, b[3]|m3
	f.count++
	return true
}

// hasDigest is Has for the key whose digest is h.
func (f *BlockedFilter) hasDigest(h uint64) bool {
	m0, m1, m2, m3 := masks(uint32(h))
	return missing(f.block(h), m0, m1, m2, m3) == 0
}
