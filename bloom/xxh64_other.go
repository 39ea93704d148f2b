//go:build !wasm

package bloom

import "github.com/cespare/xxhash/v2"

// Outside wasm, XXH64 is github.com/cespare/xxhash/v2, with its assembly on
// amd64 and arm64. xxh64_wasm.go has the wasm version.

func xxh64(b []byte, seed uint64) uint64 {
	if seed == 0 {
		return xxhash.Sum64(b)
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	d.Write(b)
	return d.Sum64()
}

func xxh64String(s string, seed uint64) uint64 {
	if seed == 0 {
		return xxhash.Sum64String(s)
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	d.WriteString(s)
	return d.Sum64()
}

// xxh64Seed0 and xxh64Seed0String are XXH64 with seed 0, the hash of the
// split-block kind. They inline, so BlockedFilter's Add and Has call
// xxhash's assembly directly, one call a key fewer than through xxh64.
func xxh64Seed0(b []byte) uint64 { return xxhash.Sum64(b) }

func xxh64Seed0String(s string) uint64 { return xxhash.Sum64String(s) }

// A checksum computes XXH64 with seed 0 of everything written to it.
type checksum = xxhash.Digest

func newChecksum() *checksum { return xxhash.New() }

// newSeededChecksum returns a checksum that computes XXH64 under seed.
func newSeededChecksum(seed uint64) *checksum { return xxhash.NewWithSeed(seed) }
