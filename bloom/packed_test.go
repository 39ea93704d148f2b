package bloom

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/edgebloom/edgebloom/internal/engine"
)

// TestPacked checks the engine's batches (engine.Batch) of keys back to
// back against Add and Has, key by key and bit for bit, on keys of every length up to 100 bytes (both sides of
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
		engine.Batch(a, keys, 0, lens, out, true)
		rest := keys
		for i, n := range lens {
			if want := b2u8test(b.Add(rest[:n])); out[i] != want {
				t.Fatalf("seed %#x: batch add key %d = %d, Add = %d", seed, i, out[i], want)
			}
			rest = rest[n:]
		}
		if !a.Equal(b) || a.Count() != b.Count() {
			t.Fatalf("seed %#x: the batch and Add set different bits or counts (%d, %d)", seed, a.Count(), b.Count())
		}
		probe := append(bytes.Clone(keys), "absent"...)
		plens := append(append([]uint32(nil), lens...), 6)
		out = make([]byte, len(plens))
		engine.Batch(a, probe, 0, plens, out, false)
		rest = probe
		for i, n := range plens {
			if want := b2u8test(b.Has(rest[:n])); out[i] != want {
				t.Fatalf("seed %#x: batch has key %d = %d, Has = %d", seed, i, out[i], want)
			}
			rest = rest[n:]
		}
	}
	f, _ := New(100, 0.01)
	if got := engine.Batch(f, []byte("abc"), 0, []uint32{2, 2}, make([]byte, 2), true); got != engine.OutOfRange || f.Count() != 0 {
		t.Errorf("a batch with lengths past the keys: %d, count %d; want OutOfRange, nothing added", got, f.Count())
	}
}

func b2u8test(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// TestStrided checks the engine's batches (engine.Batch) of both kinds that
// have them against Add and Has, key by key and bit for bit, with keys back
// to back (stride 0) and in slots of 104 and 128 bytes, and that the other
// kinds are left to the caller.
func TestStrided(t *testing.T) {
	type strided interface {
		Add([]byte) bool
		Has([]byte) bool
		MarshalBinary() ([]byte, error)
		Count() uint64
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
			// check runs the batch over keys, then the single calls on b.
			check := func(keys [][]byte, add bool, batchName string, single func([]byte) bool) {
				buf, lens := layout(keys)
				out := make([]byte, len(lens))
				if engine.Batch(a, buf, stride, lens, out, add) != engine.Done {
					t.Fatalf("%s: engine.Batch refused the kind", name)
				}
				for i, k := range keys {
					if want := b2u8test(single(k)); out[i] != want {
						t.Fatalf("%s, stride %d: %s key %d: %d, single call: %d", name, stride, batchName, i, out[i], want)
					}
				}
			}
			check(all, true, "add", b.Add)
			ab, _ := a.MarshalBinary()
			bb, _ := b.MarshalBinary()
			if !bytes.Equal(ab, bb) {
				t.Fatalf("%s, stride %d: batch and Add set different bits or counts", name, stride)
			}
			check(probes, false, "has", b.Has)
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
			before := f.Count()
			if got := engine.Batch(f, bad.keys, bad.stride, bad.lens, make([]byte, len(bad.lens)), true); got != engine.OutOfRange || f.Count() != before {
				t.Errorf("%s: a batch of %q, stride %d, lengths %v: %d, count %d → %d; want OutOfRange, nothing added", name, bad.keys, bad.stride, bad.lens, got, before, f.Count())
			}
		}
	}
}

// TestBatchOtherKinds checks that engine.Batch leaves the kinds without a
// strided batch to its caller, untouched.
func TestBatchOtherKinds(t *testing.T) {
	counting, _ := NewCounting(100, 0.01)
	scalable, _ := NewScalable(100, 0.01)
	window, _ := NewWindow(100, 0.01, 2)
	for name, f := range map[string]interface{ Count() uint64 }{"counting": counting, "scalable": scalable, "window": window, "nil": (*Filter)(nil)} {
		if name == "nil" {
			continue
		}
		out := []byte{7}
		if engine.Batch(f, []byte("a"), 0, []uint32{1}, out, true) != engine.OtherKind || out[0] != 7 || f.Count() != 0 {
			t.Errorf("%s: engine.Batch took a kind it does not batch", name)
		}
	}
}
