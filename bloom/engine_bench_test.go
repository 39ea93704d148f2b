package bloom

import (
	"strconv"
	"testing"

	"github.com/edgebloom/edgebloom/internal/engine"
)

// BenchmarkEngineBatch is the cost of reaching the strided batch through
// engine.Batch (an indirect call and a type switch), the way the npm
// module's engine does, beside the method called directly: one key (the
// engine's single add) and a batch of 1000.
func BenchmarkEngineBatch(b *testing.B) {
	f, _ := New(1_000_000, 0.01)
	const n = 1000
	var keys []byte
	lens := make([]uint32, n)
	for i := range lens {
		k := "https://example.com/path/" + strconv.Itoa(i*7919)
		keys = append(keys, k...)
		lens[i] = uint32(len(k))
	}
	out := make([]byte, n)
	one := keys[:lens[0]]
	b.Run("one/direct", func(b *testing.B) {
		for b.Loop() {
			f.addStrided(one, 0, lens[:1], out[:1])
		}
	})
	b.Run("one/hook", func(b *testing.B) {
		for b.Loop() {
			engine.Batch(f, one, 0, lens[:1], out[:1], true)
		}
	})
	b.Run("1000/direct", func(b *testing.B) {
		for b.Loop() {
			f.hasStrided(keys, 0, lens, out)
		}
	})
	b.Run("1000/hook", func(b *testing.B) {
		for b.Loop() {
			engine.Batch(f, keys, 0, lens, out, false)
		}
	})
}
