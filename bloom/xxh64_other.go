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

// A checksum computes XXH64 with seed 0 of everything written to it.
type checksum = xxhash.Digest

func newChecksum() *checksum { return xxhash.New() }
