// How many blocks a split-block filter needs for a capacity and a rate,
// and the rate a number of blocks gives after n keys: the sizing rules of
// the split-block kind, beside the classic kind's in estimate.go.

package bloom

import (
	"math"
	"math/bits"
)

// ParquetBlocks returns OptimalBlocks(capacity, fpRate) rounded up to a
// power of two: the size of a filter that every Parquet reader accepts.
// Rounding up costs up to twice the memory, and the rate falls with it:
// the expected rate at capacity is EstimateBlockedFPR(blocks, capacity), at
// most 0.9·fpRate and often far below (1 000 000 keys at 1%: 65 536 blocks,
// 2 MiB, 0.10%, where OptimalBlocks gives 42 081 blocks, 1.3 MiB, 0.90%;
// 10 000 000 keys at 1%: 524 288 blocks, 16 MiB, 0.32%). It returns an
// error naming the argument when OptimalBlocks does, or when the filter
// would be larger than MaxParquetBytes (2^22 blocks).
func ParquetBlocks(capacity uint64, fpRate float64) (uint64, error) {
	blocks, err := OptimalBlocks(capacity, fpRate)
	if err != nil {
		return 0, err
	}
	if blocks > MaxParquetBytes/32 {
		return 0, argError("capacity", "needs more than MaxParquetBytes (128 MiB, Arrow's limit) at this fpRate, got "+utoa(32*blocks)+" bytes before rounding")
	}
	return 1 << bits.Len64(blocks-1), nil
}

func estimateBlockedCount(blocks, set uint64) float64 {
	m := BlockBits * blocks
	if set >= m {
		return math.Inf(1)
	}
	return math.Log1p(-float64(set)/float64(m)) / math.Log1p(-1/(32*float64(blocks)))
}

// OptimalBlocks returns the smallest number of blocks whose split-block
// filter, holding capacity keys, has an expected false-positive rate of at
// most 0.9·fpRate. The expected rate of b blocks after n keys is
//
//	FPR(n, b) = Σ_j Poisson(j; λ = n/b) · (1 - (1 - 1/32)^j)^8
//
// since the number of keys in a block is about Poisson with mean n/b, and a
// block with j keys has each bit of a word set with probability
// 1 - (31/32)^j. The 10% margin absorbs the scatter of a real filter's rate
// around the expected one, so the rate measured at capacity lies in
// [0.8·fpRate, fpRate]. For n = 1 000 000 that is 42 081 blocks (10.77 bits
// a key) at 1% and 67 356 blocks (17.24 bits a key) at 0.1%. OptimalBlocks
// returns an error naming the argument when capacity is 0, fpRate is not in
// (0, 1), or more than MaxBlocks blocks are needed.
func OptimalBlocks(capacity uint64, fpRate float64) (uint64, error) {
	switch {
	case capacity == 0:
		return 0, argError("capacity", "must be at least 1")
	case math.IsNaN(fpRate) || fpRate <= 0 || fpRate >= 1:
		return 0, argError("fpRate", "must be in (0, 1)")
	}
	target := blockedSizingMargin * fpRate
	// The rate depends on λ = n/b alone and grows with it: find the
	// largest λ whose rate is at most target, by bisection on a log scale
	// (λ is below 2^-20 for the smallest rates and below 1300 for the
	// largest), then the b around n/λ.
	lo, hi := 0x1p-80, 2048.0
	if blockedFPR(lo) > target {
		return 0, argError("capacity", "needs more than MaxBlocks (2^32) blocks at this fpRate")
	}
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if blockedFPR(mid) <= target {
			lo = mid
		} else {
			hi = mid
		}
		if hi/lo < 1+1e-12 {
			break
		}
	}
	n := float64(capacity)
	b := math.Ceil(n / lo)
	if b > MaxBlocks {
		return 0, argError("capacity", "needs more than MaxBlocks (2^32) blocks at this fpRate")
	}
	blocks := max(1, uint64(b))
	// Settle the rounding with the rate itself: the smallest b that meets
	// target.
	for blocks < MaxBlocks && blockedFPR(n/float64(blocks)) > target {
		blocks++
	}
	for blocks > 1 && blockedFPR(n/float64(blocks-1)) <= target {
		blocks--
	}
	if blockedFPR(n/float64(blocks)) > target {
		return 0, argError("capacity", "needs more than MaxBlocks (2^32) blocks at this fpRate")
	}
	return blocks, nil
}

// EstimateBlockedFPR returns the expected false-positive rate
// Σ_j Poisson(j; n/blocks) · (1 - (31/32)^j)^8 of a split-block filter of
// blocks blocks after n distinct keys were added (see OptimalBlocks). It
// returns 1 when blocks is 0.
func EstimateBlockedFPR(blocks, n uint64) float64 {
	if blocks == 0 {
		return 1
	}
	return blockedFPR(float64(n) / float64(blocks))
}

// blockedFPR is the expected false-positive rate of a split-block filter
// with λ keys a block on average.
func blockedFPR(lambda float64) float64 {
	if lambda <= 0 {
		return 0
	}
	// The Poisson terms beyond 12 standard deviations add less than
	// 1e-30 of the sum.
	sd := math.Sqrt(lambda)
	lo := max(0, math.Floor(lambda-12*sd-8))
	hi := math.Ceil(lambda + 12*sd + 40)
	logLambda, log31of32 := math.Log(lambda), math.Log1p(-1.0/32)
	var sum float64
	// lg is ln j!, summed rather than math.Lgamma(j + 1), which links
	// math's sin, cos and tables into every wasm build. Likewise 1 - Exp
	// rather than -Expm1 (the argument is at most ln(31/32), far from where
	// Expm1 is needed) and the builtin min and max, which link more of
	// package math (what each costs: docs/size.md, "What each choice
	// saves"). The rate differs from the one with Lgamma and Expm1 by at
	// most 1e-11 of itself, and OptimalBlocks gives the same blocks with
	// either.
	lg := 0.0
	for i := 2.0; i <= lo; i++ {
		lg += math.Log(i)
	}
	for j := lo; j <= hi; j++ {
		if j > lo {
			lg += math.Log(j)
		}
		pmf := math.Exp(j*logLambda - lambda - lg)
		set := 1 - math.Exp(j*log31of32) // a word's bit is set: 1 - (31/32)^j
		set2 := set * set
		set4 := set2 * set2
		sum += pmf * set4 * set4
	}
	return min(sum, 1)
}
