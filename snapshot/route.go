package snapshot

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
)

// Routing: a key's shard is floor(XXH64(key, seed) · s / 2^64), the first
// location of the key in a classic filter of m = s bits and that seed,
// which is what Router makes. Route and a Sharded's calls compute it
// without allocating, with the one-shot XXH64 below: xxhash.Digest, the
// seeded XXH64 xxhash offers, copies the key through its buffer and took
// 2.5 times as long as this on URLs of 40 bytes.

// Route returns the shard of key among the shards of router:
// router.Locations(key)[0].
func Route(router *bloom.Filter, key string) int {
	return routeOf(routeSum(key, router.Seed()), router.NumBits())
}

// routeOf maps the digest h to one of s shards, floor(h · s / 2^64).
func routeOf(h, s uint64) int {
	hi, _ := bits.Mul64(h, s)
	return int(hi)
}

// routeSumBytes is routeSum for a byte slice.
func routeSumBytes(key []byte, seed uint64) uint64 { return xxh64(key, seed) }

// routeSum is XXH64 of key's bytes under seed.
func routeSum(key string, seed uint64) uint64 {
	return xxh64(unsafe.Slice(unsafe.StringData(key), len(key)), seed)
}

const (
	prime1 uint64 = 0x9e3779b185ebca87
	prime2 uint64 = 0xc2b2ae3d27d4eb4f
	prime3 uint64 = 0x165667b19e3779f9
	prime4 uint64 = 0x85ebca77c2b2ae63
	prime5 uint64 = 0x27d4eb2f165667c5
)

// xxh64 is XXH64 (xxhash's specification, github.com/Cyan4973/xxHash) of
// b under seed; route_test.go compares it with xxhash.Digest.
func xxh64(b []byte, seed uint64) uint64 {
	le := binary.LittleEndian
	n := len(b)
	h := seed + prime5
	if n >= 32 {
		v1, v2, v3, v4 := seed+prime1+prime2, seed+prime2, seed, seed-prime1
		for ; len(b) >= 32; b = b[32:] {
			v1 = xxRound(v1, le.Uint64(b[0:8]))
			v2 = xxRound(v2, le.Uint64(b[8:16]))
			v3 = xxRound(v3, le.Uint64(b[16:24]))
			v4 = xxRound(v4, le.Uint64(b[24:32]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		for _, v := range [4]uint64{v1, v2, v3, v4} {
			h ^= xxRound(0, v)
			h = h*prime1 + prime4
		}
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(0, le.Uint64(b[:8]))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(b) >= 4 {
		h ^= uint64(le.Uint32(b[:4])) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

func xxRound(acc, input uint64) uint64 {
	acc += input * prime2
	return bits.RotateLeft64(acc, 31) * prime1
}
