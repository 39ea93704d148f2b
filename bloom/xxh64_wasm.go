//go:build wasm

package bloom

import (
	"math/bits"
	"unsafe"
)

// XXH64 for wasm, equal to github.com/cespare/xxhash/v2 (the tests compare
// them on every length up to 300 and on streamed writes). xxhash's portable
// code reads words with encoding/binary, which Go's wasm backend compiles to
// eight byte loads, shifts and bounds checks: this one loads each word with
// one i64.load, after checking the length once. It also keeps xxhash,
// encoding/binary and reflect out of the npm module's wasm.

const (
	prime1 uint64 = 0x9e3779b185ebca87
	prime2 uint64 = 0xc2b2ae3d27d4eb4f
	prime3 uint64 = 0x165667b19e3779f9
	prime4 uint64 = 0x85ebca77c2b2ae63
	prime5 uint64 = 0x27d4eb2f165667c5
)

// load64 and load32 read little-endian words at p+i; the caller has checked
// that they lie inside the slice p points into. Wasm is little-endian.
func ld64(p unsafe.Pointer, i int) uint64 { return *(*uint64)(unsafe.Add(p, i)) }
func ld32(p unsafe.Pointer, i int) uint32 { return *(*uint32)(unsafe.Add(p, i)) }

func round(acc, input uint64) uint64 {
	acc += input * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

// xxh64Go returns the XXH64 digest of b under seed: the Go version of
// xxh64Asm (xxh64asm_wasm.go), which the tests compare with it and with
// xxhash.
func xxh64Go(b []byte, seed uint64) uint64 {
	n := len(b)
	p := unsafe.Pointer(unsafe.SliceData(b))
	i := 0
	var h uint64
	if n >= 32 {
		v1, v2, v3, v4 := seed+prime1+prime2, seed+prime2, seed, seed-prime1
		for ; n-i >= 32; i += 32 {
			v1 = round(v1, ld64(p, i))
			v2 = round(v2, ld64(p, i+8))
			v3 = round(v3, ld64(p, i+16))
			v4 = round(v4, ld64(p, i+24))
		}
		h = mergeAll(v1, v2, v3, v4)
	} else {
		h = seed + prime5
	}
	return finish(h+uint64(n), p, i, n)
}

func xxh64String(s string, seed uint64) uint64 {
	return xxh64(unsafe.Slice(unsafe.StringData(s), len(s)), seed)
}

// xxh64Seed0 and xxh64Seed0String are XXH64 with seed 0, the hash of the
// split-block kind (see xxh64_other.go).
func xxh64Seed0(b []byte) uint64 { return xxh64(b, 0) }

func xxh64Seed0String(s string) uint64 { return xxh64String(s, 0) }

// finish mixes in the bytes p[i:n], fewer than 32, and the final avalanche.
func finish(h uint64, p unsafe.Pointer, i, n int) uint64 {
	for ; n-i >= 8; i += 8 {
		h ^= round(0, ld64(p, i))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if n-i >= 4 {
		h ^= uint64(ld32(p, i)) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		i += 4
	}
	for ; i < n; i++ {
		h ^= uint64(*(*byte)(unsafe.Add(p, i))) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// A checksum computes XXH64 with seed 0 of everything written to it, as
// xxhash.Digest does.
type checksum struct {
	v1, v2, v3, v4 uint64
	total          uint64
	mem            [32]byte
	n              int // bytes in mem
}

func newChecksum() *checksum { return newSeededChecksum(0) }

// newSeededChecksum returns a checksum that computes XXH64 under seed.
func newSeededChecksum(seed uint64) *checksum {
	return &checksum{v1: seed + prime1 + prime2, v2: seed + prime2, v3: seed, v4: seed - prime1}
}

func (d *checksum) Write(b []byte) (int, error) {
	size := len(b)
	d.total += uint64(size)
	if d.n+len(b) < 32 {
		d.n += copy(d.mem[d.n:], b)
		return size, nil
	}
	if d.n > 0 {
		c := copy(d.mem[d.n:], b)
		d.blocks(unsafe.Pointer(&d.mem), 32)
		b = b[c:]
		d.n = 0
	}
	if len(b) >= 32 {
		full := len(b) &^ 31
		d.blocks(unsafe.Pointer(unsafe.SliceData(b)), full)
		b = b[full:]
	}
	d.n = copy(d.mem[:], b)
	return size, nil
}

// blocks mixes in the n bytes at p, a multiple of 32.
func (d *checksum) blocks(p unsafe.Pointer, n int) {
	v1, v2, v3, v4 := d.v1, d.v2, d.v3, d.v4
	for i := 0; i < n; i += 32 {
		v1 = round(v1, ld64(p, i))
		v2 = round(v2, ld64(p, i+8))
		v3 = round(v3, ld64(p, i+16))
		v4 = round(v4, ld64(p, i+24))
	}
	d.v1, d.v2, d.v3, d.v4 = v1, v2, v3, v4
}

func (d *checksum) Sum64() uint64 {
	var h uint64
	if d.total >= 32 {
		h = mergeAll(d.v1, d.v2, d.v3, d.v4)
	} else {
		h = d.v3 + prime5
	}
	return finish(h+d.total, unsafe.Pointer(&d.mem), 0, d.n)
}
