package bloom

import (
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// TestXXH64 pins the package's XXH64 (its own on wasm, xxhash elsewhere) to
// github.com/cespare/xxhash/v2 on every length up to 300, with and without a
// seed, and the checksum on the same bytes written in random pieces.
func TestXXH64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		b := buf[:n]
		if got, want := xxh64(b, 0), xxhash.Sum64(b); got != want {
			t.Fatalf("xxh64(%d bytes, 0) = %#x, want %#x", n, got, want)
		}
		if got, want := xxh64String(string(b), 0), xxhash.Sum64(b); got != want {
			t.Fatalf("xxh64String(%d bytes, 0) = %#x, want %#x", n, got, want)
		}
		seed := rng.Uint64()
		d := xxhash.NewWithSeed(seed)
		d.Write(b)
		if got, want := xxh64(b, seed), d.Sum64(); got != want {
			t.Fatalf("xxh64(%d bytes, %#x) = %#x, want %#x", n, seed, got, want)
		}
		c := newChecksum()
		for rest := b; len(rest) > 0; {
			k := min(len(rest), rng.IntN(70))
			c.Write(rest[:k])
			rest = rest[k:]
		}
		if got, want := c.Sum64(), xxhash.Sum64(b); got != want {
			t.Fatalf("checksum of %d bytes = %#x, want %#x", n, got, want)
		}
	}
}

// FuzzXXH64 compares the package's XXH64 (the assembly on wasm, xxhash
// elsewhere) with github.com/cespare/xxhash/v2 on arbitrary bytes and
// seeds, one-shot and through the checksum in two pieces.
func FuzzXXH64(f *testing.F) {
	f.Add([]byte(""), uint64(0), 0)
	f.Add([]byte("https://www.example.com/a/b-1?utm_source=x"), uint64(0), 7)
	f.Add(make([]byte, 300), uint64(1)<<63, 150)
	f.Fuzz(func(t *testing.T, b []byte, seed uint64, cut int) {
		d := xxhash.NewWithSeed(seed)
		d.Write(b)
		w := d.Sum64()
		if got := xxh64(b, seed); got != w {
			t.Fatalf("xxh64(%x, %#x) = %#x, want %#x", b, seed, got, w)
		}
		if got := xxh64String(string(b), seed); got != w {
			t.Fatalf("xxh64String(%x, %#x) = %#x, want %#x", b, seed, got, w)
		}
		c := newSeededChecksum(seed)
		cut = min(max(cut, 0), len(b))
		c.Write(b[:cut])
		c.Write(b[cut:])
		if got := c.Sum64(); got != w {
			t.Fatalf("checksum of %x in two at %d, seed %#x = %#x, want %#x", b, cut, seed, got, w)
		}
	})
}
