//go:build wasm

package bloom

import "unsafe"

// The assembly in xxh64_wasm.s. Both read exactly the bytes they are given.

// hashGroupAsm stores in hs[i] XXH64 under seed of the count keys of
// lengths ls[i] that lie from p, back to back (stride 0) or every stride
// bytes, and returns the address where the key after them starts.
//
//go:noescape
func hashGroupAsm(p *byte, ls *uint32, count int, stride int, seed uint64, hs *uint64) *byte

// memoryEnd returns the address one past the last byte of linear memory
// (for the tests: a key that ends there is read by nothing past its end).
func memoryEnd() unsafe.Pointer

// xxh64Asm returns XXH64 under seed of the n bytes at p: a group of one
// key. n is below 2^32: linear memory is at most 4 GiB.
func xxh64Asm(p *byte, n int, seed uint64) uint64 {
	l, h := uint32(n), uint64(0)
	hashGroupAsm(p, &l, 1, 0, seed, &h)
	return h
}

// xxh64 returns the XXH64 digest of b under seed.
func xxh64(b []byte, seed uint64) uint64 { return xxh64Asm(unsafe.SliceData(b), len(b), seed) }
