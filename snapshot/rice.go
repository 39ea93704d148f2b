package snapshot

import (
	"iter"
	"math"
	"math/bits"
	"slices"
)

// Golomb-Rice coding of a record's positions (delta version 2): the gaps
// d0 = p0 and dj = pj - pj-1 - 1 of the increasing positions, each as
// q = d >> r one-bits and a zero-bit, then the r low bits of d, least
// significant first; the bit stream fills each byte from its least
// significant bit, and the bits after the last gap are 0. For gaps of a
// geometric distribution (bits spread at random, as a Bloom filter's are)
// the best r gives within a few percent of their entropy, where LEB128
// varints take whole bytes (1.3-1.9 times it at the densities of a delta).

// riceCost is the bits of the gaps of pos (increasing) coded with
// parameter r.
func riceCost(pos iter.Seq[uint64], n uint64, r uint) uint64 {
	total := n * uint64(r+1)
	prev := uint64(math.MaxUint64) // p0's gap is p0
	for p := range pos {
		total += (p - prev - 1) >> r
		prev = p
	}
	return total
}

// riceBody is the bytes of the body appendRiceSeq writes for the n
// positions of pos, the last of them last.
func riceBody(pos iter.Seq[uint64], n, last uint64) int {
	_, bits := riceBest(pos, n, last)
	return 2 + int((bits+7)/8)
}

// riceBest returns the r that codes the n positions of pos, the last of
// them last, in the fewest bits (near log2 of the mean gap times ln 2, the
// best of three around it), and the bits of the gaps coded with it.
func riceBest(pos iter.Seq[uint64], n, last uint64) (uint, uint64) {
	if n == 0 {
		return 0, 0
	}
	mean := float64(last+1-n) / float64(n)
	guess := 0
	if v := mean * math.Ln2; v >= 1 {
		guess = min(maxRiceBits, int(math.Log2(v)))
	}
	best, bestCost := uint(0), uint64(math.MaxUint64)
	for r := max(0, guess-1); r <= min(maxRiceBits, guess+1); r++ {
		if c := riceCost(pos, n, uint(r)); c < bestCost {
			best, bestCost = uint(r), c
		}
	}
	return best, bestCost
}

// appendRice appends the body of a Rice-coded record of pos (increasing):
// the coding byte, r, then the gaps.
func appendRice(dst []byte, pos []uint64) []byte {
	last := uint64(0)
	if len(pos) > 0 {
		last = pos[len(pos)-1]
	}
	return appendRiceSeq(dst, slices.Values(pos), uint64(len(pos)), last)
}

// appendRiceSeq is appendRice of the n positions of pos, the last of them
// last, which it reads four times (three costs, then the gaps): pos may be
// the set bits of a bitset, never held as a list.
func appendRiceSeq(dst []byte, pos iter.Seq[uint64], n, last uint64) []byte {
	r, cost := riceBest(pos, n, last)
	dst = slices.Grow(dst, 2+int((cost+7)/8))
	dst = append(dst, deltaCodingRice, byte(r))
	var acc uint64
	var nb uint
	put := func(v uint64, n uint) { // n <= 24, nb < 8 on entry
		acc |= v << nb
		nb += n
		for nb >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	prev := uint64(math.MaxUint64)
	for p := range pos {
		d := p - prev - 1
		prev = p
		for q := d >> r; ; q -= 24 {
			if q < 24 {
				put(1<<q-1, uint(q)) // q ones
				break
			}
			put(1<<24-1, 24)
		}
		put(0, 1)
		put(d&(1<<r-1), r)
	}
	if nb > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// decodeRice reads n positions below m from the bit stream in body, coded
// with parameter r, into out (of length n). It reports false when the
// stream ends early, a position reaches m, or bits other than 0 follow the
// last gap.
func decodeRice(body []byte, r uint, m uint64, out []uint64) bool {
	j := 0
	return decodeRiceEach(body, r, m, uint64(len(out)), func(p uint64) { out[j] = p; j++ })
}

// decodeRiceEach is decodeRice that hands each of the n positions to set
// as it is read, rather than keep them: set may see some before the
// stream turns out bad.
func decodeRiceEach(body []byte, r uint, m, n uint64, set func(uint64)) bool {
	var acc uint64 // the unread bits, least significant first
	var nb uint
	at := 0
	p := uint64(math.MaxUint64)
	for range n {
		var q uint64
		for {
			if nb == 0 {
				if at == len(body) {
					return false
				}
				acc, nb = uint64(body[at]), 8
				at++
			}
			ones := uint(bits.TrailingZeros64(^acc))
			if ones < nb {
				q += uint64(ones)
				acc >>= ones + 1
				nb -= ones + 1
				break
			}
			q += uint64(nb)
			acc, nb = 0, 0
			if q > m { // no gap of a position below m
				return false
			}
		}
		for nb < r {
			if at == len(body) {
				return false
			}
			acc |= uint64(body[at]) << nb
			nb += 8
			at++
		}
		d := q<<r | acc&(1<<r-1)
		acc >>= r
		nb -= r
		// p < m <= 2^32 and d < m: no overflow (the first p+1 is 0).
		if d >= m || p+1+d >= m {
			return false
		}
		p += 1 + d
		set(p)
	}
	return at == len(body) && acc == 0
}
