package bloom

import (
	"fmt"
	"testing"
)

// TestDigestPieces checks that a key written in pieces of every size hashes
// as the whole key, under seed 0 and another seed.
func TestDigestPieces(t *testing.T) {
	key := make([]byte, 1000)
	for i := range key {
		key[i] = byte(i*7 + i>>3)
	}
	for _, seed := range []uint64{0, 0x9e3779b97f4a7c15} {
		for _, n := range []int{0, 1, 5, 31, 32, 33, 100, 1000} {
			for _, piece := range []int{1, 3, 8, 31, 32, 64, 1000} {
				d := NewDigest(seed)
				for rest := key[:n]; len(rest) > 0; {
					c := min(piece, len(rest))
					d.Write(rest[:c])
					rest = rest[c:]
				}
				if got, want := d.Sum64(), sum(key[:n], seed); got != want {
					t.Errorf("seed %#x, %d bytes in pieces of %d: got %#x; want %#x", seed, n, piece, got, want)
				}
			}
		}
	}
}

// TestAddDigest checks that every kind answers HasDigest as Has of the key,
// and holds the keys added by AddDigest.
func TestAddDigest(t *testing.T) {
	type digestFilter interface {
		Add([]byte) bool
		Has([]byte) bool
		AddDigest(uint64) bool
		HasDigest(uint64) bool
		Seed() uint64
	}
	classic, _ := NewWithSeed(20000, 7, 42)
	counting, _ := NewCounting(1000, 0.01)
	scalable, _ := NewScalable(100, 0.01)
	window, _ := NewWindow(1000, 0.01, 3)
	blocked, _ := NewBlocked(1000, 0.01)
	for name, f := range map[string]digestFilter{"classic": classic, "counting": counting, "scalable": scalable, "window": window, "blocked": blocked} {
		digest := func(key []byte) uint64 {
			d := NewDigest(f.Seed())
			d.Write(key[:len(key)/2])
			d.Write(key[len(key)/2:])
			return d.Sum64()
		}
		for i := range 500 {
			key := []byte(fmt.Sprintf("https://example.com/%d/%s", i, make([]byte, i)))
			if i%2 == 0 {
				f.AddDigest(digest(key))
			} else {
				f.Add(key)
			}
		}
		for i := range 1000 {
			key := []byte(fmt.Sprintf("https://example.com/%d/%s", i, make([]byte, i)))
			if got, want := f.HasDigest(digest(key)), f.Has(key); got != want || (i < 500 && !got) {
				t.Errorf("%s: HasDigest of key %d: got %v; Has says %v", name, i, got, want)
			}
		}
	}
}
