package bloom

import (
	"math"

	"github.com/edgebloom/edgebloom/internal/abi"
)

// Limits on the size of a filter. They bound what New, NewWithSize and the
// decoders accept, so a hostile header can never ask for more.
const (
	// MaxBits is the largest number of bits (or counters) in one filter:
	// 2^40 bits, a 128 GiB bitset. Positions are computed in 64-bit
	// arithmetic, so every m up to MaxBits, including m > 2^32, is usable.
	MaxBits = 1 << 40
	// MaxHashes is the largest number of hash functions k. An error rate
	// needs about log2(1/p) hashes, so 64 covers every p ≥ 2^-64.
	MaxHashes = 64
	// MaxGenerations is the largest number of generations of a
	// WindowFilter: 4096 is more than eleven years of daily generations.
	// NewWindow and DecodeWindow check it before allocating anything, so a
	// hostile header cannot make a decoder walk millions of tiny records.
	MaxGenerations = 1 << 12
	// MaxLayers is the largest number of layers of a ScalableFilter. A
	// filter stops growing well before it (each layer doubles the capacity
	// and halves the error rate, so MaxBits or MaxHashes ends the growth
	// after at most about 60 layers); DecodeScalable refuses more.
	MaxLayers = 64
	// MaxCountPerBit bounds the count a decoder accepts: at most
	// MaxCountPerBit·m. An Add is counted only when it sets a bit, so a
	// filter's count stays at or below m, and Union and Intersect, which
	// set it to the estimate -m/k·ln(1 - X/m), stay below m·ln(m) < 28·m.
	// A larger count is a corrupt or crafted record, and the bound keeps
	// every count below 2^46, exact in a JavaScript number.
	MaxCountPerBit = 64
)

// Optimal returns the number of bits m and hash functions k that hold
// capacity keys at false-positive rate fpRate:
//
//	m = ceil(-n·ln p / (ln 2)²)
//	k = max(1, round(ln 2 · m / n))
//
// For n = 1 000 000 and p = 0.01 that is m = 9 585 059 bits (about 9.6 bits
// a key) and k = 7. Optimal returns an error naming the argument when
// capacity is 0, fpRate is not in (0, 1), or the result exceeds MaxBits or
// MaxHashes.
func Optimal(capacity uint64, fpRate float64) (m uint64, k uint32, err error) {
	switch {
	case capacity == 0:
		return 0, 0, argError("capacity", "must be at least 1")
	case math.IsNaN(fpRate) || fpRate <= 0 || fpRate >= 1:
		return 0, 0, argError("fpRate", "must be in (0, 1)")
	}
	n := float64(capacity)
	bits := abi.OptimalBits(n, fpRate)
	if bits > MaxBits {
		return 0, 0, argError("capacity", "needs more than MaxBits (2^40) bits at this fpRate")
	}
	m = uint64(bits)
	hashes := abi.OptimalHashes(float64(m), n)
	if hashes > MaxHashes {
		return 0, 0, argError("fpRate", "needs "+utoa(uint64(hashes))+
			" hash functions, more than MaxHashes (64)")
	}
	return m, uint32(hashes), nil
}

// EstimateFPR returns the expected false-positive rate (1 - e^(-k·n/m))^k of a
// filter with m bits and k hash functions after n distinct keys were added.
// It returns 1 when m or k is 0.
func EstimateFPR(m uint64, k uint32, n uint64) float64 {
	if m == 0 || k == 0 {
		return 1
	}
	return abi.EstimateFPR(float64(m), float64(k), float64(n))
}

// estimateCount is Swamidass and Baldi's estimate -m/k · ln(1 - X/m) of the
// number of distinct keys in a filter with X of its m bits set.
func estimateCount(m uint64, k uint32, set uint64) float64 {
	if set >= m {
		return math.Inf(1)
	}
	return -float64(m) / float64(k) * math.Log1p(-float64(set)/float64(m))
}

// checkSize validates an explicit size before anything is allocated.
func checkSize(m uint64, k uint32) error {
	switch {
	case m == 0:
		return argError("m", "must be at least 1")
	case m > MaxBits:
		return argError("m", "must be at most MaxBits ("+utoa(MaxBits)+"), got "+utoa(m))
	case k == 0:
		return argError("k", "must be at least 1")
	case k > MaxHashes:
		return argError("k", "must be at most MaxHashes (64), got "+utoa(uint64(k)))
	case m/64 >= math.MaxInt/8:
		return argError("m", "does not fit in this platform's address space")
	}
	return nil
}
