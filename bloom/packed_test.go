package bloom

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestPacked checks AddPacked and HasPacked against Add and Has, key by key
// and bit for bit, on keys of every length up to 100 bytes (both sides of
// each branch of the hash), with and without a seed.
func TestPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var keys []byte
	var lens []uint32
	var all [][]byte
	for i := 0; i < 3000; i++ {
		n := i % 101
		k := []byte(strconv.Itoa(i) + "-")
		for len(k) < n {
			k = append(k, byte(rng.Uint32()))
		}
		k = k[:n]
		if i%7 == 6 { // a key repeated within its group, and across groups
			k = all[i-1-rng.IntN(min(i, 40))]
		}
		all = append(all, k)
		keys = append(keys, k...)
		lens = append(lens, uint32(len(k)))
	}
	for _, seed := range []uint64{0, 0x9e3779b97f4a7c15} {
		a, err := NewWithSeed(1<<14, 7, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewWithSeed(1<<14, 7, seed)
		out := make([]byte, len(lens))
		a.AddPacked(keys, lens, out)
		rest := keys
		for i, n := range lens {
			if want := b2u8test(b.Add(rest[:n])); out[i] != want {
				t.Fatalf("seed %#x: AddPacked key %d = %d, Add = %d", seed, i, out[i], want)
			}
			rest = rest[n:]
		}
		if !a.Equal(b) || a.Count() != b.Count() {
			t.Fatalf("seed %#x: AddPacked and Add set different bits or counts (%d, %d)", seed, a.Count(), b.Count())
		}
		probe := append(bytes.Clone(keys), "absent"...)
		plens := append(append([]uint32(nil), lens...), 6)
		out = make([]byte, len(plens))
		a.HasPacked(probe, plens, out)
		rest = probe
		for i, n := range plens {
			if want := b2u8test(b.Has(rest[:n])); out[i] != want {
				t.Fatalf("seed %#x: HasPacked key %d = %d, Has = %d", seed, i, out[i], want)
			}
			rest = rest[n:]
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AddPacked with lengths past the keys did not panic")
		}
	}()
	f, _ := New(100, 0.01)
	f.AddPacked([]byte("abc"), []uint32{2, 2}, make([]byte, 2))
}

func b2u8test(b bool) byte {
	if b {
		return 1
	}
	return 0
}
