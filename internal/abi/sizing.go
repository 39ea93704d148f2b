package abi

import "math"

// The classic filter's sizing rules. Package bloom sizes with these
// (bloom.Optimal, bloom.EstimateFPR), and js/sizing.js is generated from
// them, so that the npm module's optimal() and estimateFPR(), which work
// before init() and so without the engine, give what Go gives. Each is one
// return of float64 arithmetic and package math, which the generator
// translates to JavaScript.

// OptimalBits returns the bits m of a classic filter for n keys at the
// false-positive rate p: m = ceil(-n·ln p / ln²2).
func OptimalBits(n, p float64) float64 {
	return math.Ceil(-n * math.Log(p) / (math.Ln2 * math.Ln2))
}

// OptimalHashes returns the hashes k of a classic filter of m bits for n
// keys: k = max(1, round(ln 2 · m / n)).
func OptimalHashes(m, n float64) float64 {
	return math.Max(1, math.Round(math.Ln2*m/n))
}

// EstimateFPR returns the expected false-positive rate (1 - e^(-k·n/m))^k
// of a classic filter of m bits and k hashes after n distinct keys.
func EstimateFPR(m, k, n float64) float64 {
	return math.Pow(-math.Expm1(-k*n/m), k)
}
