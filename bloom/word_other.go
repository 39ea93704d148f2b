//go:build !wasm

package bloom

import "sync/atomic"

// load64, or64 and and64 are the word operations of SyncFilter and of the
// kinds that add in parallel (WindowFilter, FileFilter): atomic, so that
// goroutines may Add and Has at once without locks. On amd64 and arm64 the
// load is a plain load and the OR, whose old value is not used, one
// instruction (LOCK OR on amd64). Filter uses plain loads and ORs instead.

func load64(p *uint64) uint64 { return atomic.LoadUint64(p) }

func or64(p *uint64, v uint64) { atomic.OrUint64(p, v) }

func and64(p *uint64, v uint64) { atomic.AndUint64(p, v) }

func add64(p *uint64, v uint64) { atomic.AddUint64(p, v) }

// copyPayload copies the payload bytes [off, off+len(p)) of words to p,
// little-endian as the format lays them out.
func copyPayload(p []byte, words []uint64, off uint64) {
	for i := range p {
		j := off + uint64(i)
		p[i] = byte(load64(&words[j/8]) >> (8 * (j % 8)))
	}
}

// setPayload replaces the payload bytes [off, off+len(p)) of words with p.
func setPayload(words []uint64, p []byte, off uint64) {
	for i, b := range p {
		j := off + uint64(i)
		shift := 8 * (j % 8)
		words[j/8] = words[j/8]&^(0xff<<shift) | uint64(b)<<shift
	}
}

// hashPayload writes the payload of words to d through a bounded buffer.
func hashPayload(d *checksum, words []uint64) {
	var buf [4096]byte
	for len(words) > 0 {
		c := min(len(words), len(buf)/8)
		for i := range words[:c] {
			wire.PutUint64(buf[8*i:], load64(&words[i]))
		}
		d.Write(buf[:8*c])
		words = words[c:]
	}
}

// putWords sets w to the len(w) little-endian words at the start of b.
func putWords(w []uint64, b []byte) {
	for i := range w {
		w[i] = wire.Uint64(b[8*i:])
	}
}
