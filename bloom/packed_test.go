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

// TestStrided checks AddStrided and HasStrided of both kinds that have them
// against Add and Has, key by key and bit for bit, with keys back to back
// (stride 0) and in slots of 104 and 128 bytes, and that AddPacked and
// HasPacked of the split-block kind are its stride 0.
func TestStrided(t *testing.T) {
	type strided interface {
		Add([]byte) bool
		Has([]byte) bool
		AddStrided([]byte, int, []uint32, []byte)
		HasStrided([]byte, int, []uint32, []byte)
		AddPacked([]byte, []uint32, []byte)
		HasPacked([]byte, []uint32, []byte)
		MarshalBinary() ([]byte, error)
	}
	kinds := map[string]func() strided{
		"classic": func() strided { f, _ := NewWithSeed(1<<14, 7, 0x9e3779b97f4a7c15); return f },
		"blocked": func() strided { f, _ := NewBlockedWithSize(64); return f },
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var all [][]byte
	for i := 0; i < 2000; i++ {
		k := []byte(strconv.Itoa(i) + "-")
		for n := i % 101; len(k) < n; {
			k = append(k, byte(rng.Uint32()))
		}
		if i%7 == 6 { // repeated within its group and across groups
			k = all[i-1-rng.IntN(min(i, 40))]
		}
		all = append(all, k)
	}
	probes := append(all[:300:300], []byte("absent"), []byte("also absent"))
	for name, newFilter := range kinds {
		for _, stride := range []int{0, 104, 128} {
			layout := func(keys [][]byte) ([]byte, []uint32) {
				var buf []byte
				var lens []uint32
				for _, k := range keys {
					buf = append(buf, k...)
					if stride > 0 {
						buf = append(buf, bytes.Repeat([]byte{0xee}, stride-len(k))...)
					}
					lens = append(lens, uint32(len(k)))
				}
				if stride > 0 {
					buf = buf[:len(buf)-stride+len(keys[len(keys)-1])] // the last slot may end at its key
				}
				return buf, lens
			}
			a, b := newFilter(), newFilter()
			// check runs the batch (AddPacked or AddStrided, HasPacked or
			// HasStrided) over keys, then the single calls on b.
			check := func(keys [][]byte, batch, stridedBatch func([]byte, []uint32, []byte), batchName string, single func([]byte) bool) {
				buf, lens := layout(keys)
				out := make([]byte, len(lens))
				if stride == 0 {
					batch(buf, lens, out)
				} else {
					stridedBatch(buf, lens, out)
				}
				for i, k := range keys {
					if want := b2u8test(single(k)); out[i] != want {
						t.Fatalf("%s, stride %d: %s key %d: %d, single call: %d", name, stride, batchName, i, out[i], want)
					}
				}
			}
			check(all, a.AddPacked, func(k []byte, l []uint32, o []byte) { a.AddStrided(k, stride, l, o) }, "add", b.Add)
			ab, _ := a.MarshalBinary()
			bb, _ := b.MarshalBinary()
			if !bytes.Equal(ab, bb) {
				t.Fatalf("%s, stride %d: batch and Add set different bits or counts", name, stride)
			}
			check(probes, a.HasPacked, func(k []byte, l []uint32, o []byte) { a.HasStrided(k, stride, l, o) }, "has", b.Has)
		}
		f := newFilter()
		for _, bad := range []struct {
			keys   []byte
			stride int
			lens   []uint32
		}{
			{[]byte("abcdefgh"), 4, []uint32{4, 5}},                     // a key longer than its slot
			{bytes.Repeat([]byte("a"), 32), 4, []uint32{4, 5, 1, 1, 1}}, // among the first four
			{bytes.Repeat([]byte("a"), 32), 4, []uint32{4, 1, 1, 1, 5}}, // after them
			{[]byte("abcdefgh"), 4, []uint32{4, 4, 1}},                  // past the end
			{[]byte("abc"), 0, []uint32{2, 2}},
			{[]byte("abc"), -1, []uint32{1}},
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: AddStrided(%q, %d, %v) did not panic", name, bad.keys, bad.stride, bad.lens)
					}
				}()
				f.AddStrided(bad.keys, bad.stride, bad.lens, make([]byte, len(bad.lens)))
			}()
		}
	}
}
