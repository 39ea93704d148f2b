//go:build wasm

package bloom

import "unsafe"

// On wasm, Go runs one goroutine at a time on one thread and switches
// goroutines only at calls, so a plain load or store of a word is already
// atomic with respect to every other goroutine. sync/atomic's functions are
// real calls there, and were the largest cost of an Add in the npm module.

func load64(p *uint64) uint64 { return *p }

func or64(p *uint64, v uint64) { *p |= v }

func and64(p *uint64, v uint64) { *p &= v }

func add64(p *uint64, v uint64) { *p += v }

// The payload's bytes are the words' bytes in memory: wasm is
// little-endian, as the format is.
func payloadView(words []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), 8*len(words))
}

// copyPayload copies the payload bytes [off, off+len(p)) of words to p.
func copyPayload(p []byte, words []uint64, off uint64) { copy(p, payloadView(words)[off:]) }

// setPayload replaces the payload bytes [off, off+len(p)) of words with p.
func setPayload(words []uint64, p []byte, off uint64) { copy(payloadView(words)[off:], p) }

// hashPayload writes the payload of words to d.
func hashPayload(d *checksum, words []uint64) { d.Write(payloadView(words)) }

// putWords sets w to the len(w) little-endian words at the start of b.
func putWords(w []uint64, b []byte) { copy(payloadView(w), b) }
