package bloom

import (
	"fmt"
	"testing"

	"github.com/edgebloom/edgebloom/internal/engine"
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
				d := engine.NewDigest(seed)
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

// TestAddDigest checks that every kind answers engine.Digested as Has of
// the key, and holds the keys it added.
func TestAddDigest(t *testing.T) {
	type digestFilter interface {
		Add([]byte) bool
		Has([]byte) bool
		Seed() uint64
	}
	classic, _ := NewWithSeed(20000, 7, 42)
	counting, _ := NewCounting(1000, 0.01)
	scalable, _ := NewScalable(100, 0.01)
	window, _ := NewWindow(1000, 0.01, 3)
	blocked, _ := NewBlocked(1000, 0.01)
	for name, f := range map[string]digestFilter{"classic": classic, "counting": counting, "scalable": scalable, "window": window, "blocked": blocked} {
		digest := func(key []byte) uint64 {
			d := engine.NewDigest(f.Seed())
			d.Write(key[:len(key)/2])
			d.Write(key[len(key)/2:])
			return d.Sum64()
		}
		for i := range 500 {
			key := []byte(fmt.Sprintf("https://example.com/%d/%s", i, make([]byte, i)))
			if i%2 == 0 {
				if _, ok := engine.Digested(f, digest(key), true); !ok {
					t.Fatalf("%s: engine.Digested does not know the kind", name)
				}
			} else {
				f.Add(key)
			}
		}
		for i := range 1000 {
			key := []byte(fmt.Sprintf("https://example.com/%d/%s", i, make([]byte, i)))
			got, _ := engine.Digested(f, digest(key), false)
			if want := f.Has(key); got != want || (i < 500 && !got) {
				t.Errorf("%s: engine.Digested of key %d: got %v; Has says %v", name, i, got, want)
			}
		}
	}
}

// TestScalableSizes checks the sizes engine.ScalableSize and
// engine.ScalableGrowth give against the filters NewScalable and Add make.
func TestScalableSizes(t *testing.T) {
	for _, c := range []struct {
		n uint64
		p float64
	}{{1, 0.5}, {100, 0.01}, {1000, 0.001}, {400_000, 0.01}} {
		s, err := NewScalable(c.n, c.p)
		if err != nil {
			t.Fatal(err)
		}
		size, err := engine.ScalableSize(c.n, c.p)
		if err != nil || size != s.EncodedSize() {
			t.Errorf("ScalableSize(%d, %v): got %d, %v; want %d", c.n, c.p, size, err, s.EncodedSize())
		}
		if c.n > 1000 {
			continue
		}
		// Add keys in batches: each grows the filter by what ScalableGrowth
		// said before it when every key was new, else by no more.
		for b := range 6 {
			k := int(c.n)*(b+1) + b
			want := engine.ScalableGrowth(s, uint64(k), 1<<62)
			before := s.EncodedSize()
			added := 0
			for i := range k {
				if s.Add([]byte(fmt.Sprintf("%d-%d", b, i))) {
					added++
				}
			}
			if got := s.EncodedSize() - before; got > want || added == k && got != want {
				t.Errorf("n %d, batch %d: %d keys, %d new, grew by %d bytes; ScalableGrowth said %d", c.n, b, k, added, got, want)
			}
		}
		if got := engine.ScalableGrowth(s, 1<<30, 1000); got <= 1000 || got > 1000+s.EncodedSize()*1024 {
			t.Errorf("ScalableGrowth past a limit of 1000: %d", got)
		}
	}
	if _, err := engine.ScalableSize(0, 0.01); err == nil {
		t.Error("ScalableSize(0, 0.01): no error")
	}
	if _, err := engine.ScalableSize(100, 1); err == nil {
		t.Error("ScalableSize(100, 1): no error")
	}
}

// TestNewSizes checks engine.NewSize against the encoded size of the
// filters the constructors make.
func TestNewSizes(t *testing.T) {
	for _, m := range []uint64{1, 63, 64, 65, 1000, 9_585_059} {
		f, _ := NewWithSize(m, 3)
		c, _ := NewCountingWithSize(m, 3)
		b, _ := NewBlockedWithSize(m)
		for _, k := range []struct {
			kind int
			name string
			want uint64
		}{{kindClassic, "classic", f.EncodedSize()}, {kindCounting, "counting", c.EncodedSize()}, {kindBlocked, "blocked", b.EncodedSize()}} {
			if got := engine.NewSize(k.kind, m, 0); got != k.want {
				t.Errorf("NewSize(%s, %d): got %d; want %d", k.name, m, got, k.want)
			}
		}
	}
	for _, gens := range []int{1, 3, 4096} {
		w, err := NewWindow(10, 0.01, gens)
		if err != nil {
			t.Fatal(err)
		}
		if got := engine.NewSize(kindWindow, w.fs[0].m, gens); got != w.EncodedSize() {
			t.Errorf("NewSize(window, %d, %d): got %d; want %d", w.fs[0].m, gens, got, w.EncodedSize())
		}
	}
}
