package bloom

import "math/bits"

// HashXXH64 is the identifier, stored in every encoded filter, of the one
// hashing scheme this package implements: XXH64 of the key's bytes with the
// filter's seed, followed by enhanced double hashing in 64-bit arithmetic.
// The scheme is frozen; docs/format.md gives it step by step and the golden
// vectors in testdata pin it. Changing it requires a new identifier.
const HashXXH64 = 1

// sum returns the XXH64 digest of key under seed: github.com/cespare/xxhash/v2
// (xxh64_other.go), or on wasm a port of it that loads words directly
// (xxh64_wasm.go).
func sum(key []byte, seed uint64) uint64 { return xxh64(key, seed) }

func sumString(key string, seed uint64) uint64 { return xxh64String(key, seed) }

// mix64 is the SplitMix64 finalizer. It derives the second hash of double
// hashing from the first, so one XXH64 call per key is enough.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

// The k positions of a key come from enhanced double hashing (Dillinger and
// Manolios, "Bloom Filters in Probabilistic Verification", FMCAD 2004):
// x0 = h1·m / 2^64, y0 = h2·m / 2^64, then position i is x, followed by
// x += y, y += i, both mod m, for i = 1, 2, … Every value stays below m, so m
// may be any size up to MaxBits and the walk needs no division in the common
// case.
//
// The hot loops in Filter.add and Filter.has keep x and y in local variables
// and call start and step, which inline; the probe type serves the rest. A
// struct walked through a pointer method lives in memory, not in registers,
// even when the method is inlined.

// start returns x0 and y0 for the key with digest h in a filter of m bits.
func start(h, m uint64) (x, y uint64) {
	x, _ = bits.Mul64(h, m)
	y, _ = bits.Mul64(mix64(h), m)
	return x, y
}

// step advances the walk past position i-1 (x) to position i: it returns
// x + y and y + i, both mod m, given x, y < m.
func step(x, y, i, m uint64) (uint64, uint64) {
	// x + y < 2m, so mod m is one subtraction of m, undone when it borrows.
	// Written with Sub64 it compiles to SUB, SBB, AND, ADD: "if x >= m
	// { x -= m }" compiles to a branch, taken half the time at random.
	x, borrow := bits.Sub64(x+y, m, 0)
	x += m & -borrow
	y += i
	if y >= m { // rare: only when y comes within i ≤ 64 of m
		y %= m
	}
	return x, y
}

// A probe walks the k positions of one key.
type probe struct {
	x, y, m, i uint64
}

func newProbe(h, m uint64) probe {
	x, y := start(h, m)
	return probe{x: x, y: y, m: m}
}

// next returns the current position and advances to the following one.
func (p *probe) next() uint64 {
	pos := p.x
	p.i++
	p.x, p.y = step(p.x, p.y, p.i, p.m)
	return pos
}

// appendLocations appends the k positions of the key with digest h to dst.
func appendLocations(dst []uint64, h, m uint64, k uint32) []uint64 {
	p := newProbe(h, m)
	for i := uint32(0); i < k; i++ {
		dst = append(dst, p.next())
	}
	return dst
}
