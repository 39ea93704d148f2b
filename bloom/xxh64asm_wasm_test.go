//go:build wasm

package bloom

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// want is XXH64 of b under seed as github.com/cespare/xxhash/v2 computes it.
func want(b []byte, seed uint64) uint64 {
	if seed == 0 {
		return xxhash.Sum64(b)
	}
	d := xxhash.NewWithSeed(seed)
	d.Write(b)
	return d.Sum64()
}

// TestXXH64AsmLengths compares the assembly with xxhash and with the Go
// version on every length up to 300, at every alignment of a word, with and
// without a seed.
func TestXXH64AsmLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 300+8)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for n := 0; n <= 300; n++ {
		for off := range 8 {
			b := buf[off : off+n]
			for _, seed := range []uint64{0, rng.Uint64()} {
				w := want(b, seed)
				if got := xxh64Asm(unsafe.SliceData(b), n, seed); got != w {
					t.Fatalf("xxh64Asm(%d bytes at +%d, %#x) = %#x, want %#x", n, off, seed, got, w)
				}
				if got := xxh64Go(b, seed); got != w {
					t.Fatalf("xxh64Go(%d bytes at +%d, %#x) = %#x, want %#x", n, off, seed, got, w)
				}
			}
		}
	}
}

// TestXXH64AsmRandom compares the assembly with xxhash on random lengths
// (up to 4 KiB, most of them short), contents, alignments and seeds. Go's
// fuzzing engine does not run on js/wasm: this is its stand-in there.
func TestXXH64AsmRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 4096+8)
	cases := 100_000
	if testing.Short() {
		cases = 10_000
	}
	for range cases {
		n := rng.IntN(1 << (1 + rng.IntN(12)))
		off := rng.IntN(8)
		b := buf[off : off+n]
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		var seed uint64
		if rng.IntN(2) == 0 {
			seed = rng.Uint64()
		}
		if got, w := xxh64(b, seed), want(b, seed); got != w {
			t.Fatalf("xxh64(%x, %#x) = %#x, want %#x", b, seed, got, w)
		}
	}
}

// TestXXH64AsmEndOfMemory hashes the last n bytes of linear memory: a read
// past the key's last byte would trap, which ends the program. The loop
// allocates nothing, so no collection runs while it holds addresses that
// may lie outside the Go heap.
func TestXXH64AsmEndOfMemory(t *testing.T) {
	ls := []uint32{0}
	var hs [group]uint64
	runtime.GC()
	end := memoryEnd()
	for n := 0; n <= 300; n++ {
		p := (*byte)(unsafe.Add(end, -n))
		b := unsafe.Slice(p, n)
		if got, w := xxh64Asm(p, n, 0), xxhash.Sum64(b); got != w {
			t.Fatalf("last %d bytes of memory: xxh64Asm = %#x, xxhash %#x", n, got, w)
		}
		ls[0] = uint32(n)
		if next := hashGroupAsm(p, &ls[0], 1, 0, 0, &hs[0]); unsafe.Pointer(next) != end || hs[0] != xxhash.Sum64(b) {
			t.Fatalf("last %d bytes of memory: hashGroupAsm = %#x, want %#x, or did not end at the end", n, hs[0], xxhash.Sum64(b))
		}
	}
}

// TestHashGroupAsm hashes groups of 0 to 32 keys of random lengths, back to
// back and in slots, and checks every digest, that nothing past the group
// is written, and where the next key starts.
func TestHashGroupAsm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	buf := make([]byte, 32*300)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for round := range 2000 {
		count := round % (group + 1)
		stride := 0
		if rng.IntN(2) == 0 {
			stride = 1 + rng.IntN(300)
		}
		ls := make([]uint32, count+1) // one more, never read
		for i := range count {
			limit := 300
			if stride != 0 {
				limit = stride
			}
			ls[i] = uint32(rng.IntN(limit + 1))
		}
		seed := rng.Uint64()
		var hs [group + 1]uint64
		hs[count] = 0x5a5a5a5a
		p := unsafe.SliceData(buf)
		next := hashGroupAsm(p, unsafe.SliceData(ls), count, stride, seed, &hs[0])
		off := 0
		for i := range count {
			if stride != 0 {
				off = i * stride
			}
			k := buf[off : off+int(ls[i])]
			if w := want(k, seed); hs[i] != w {
				t.Fatalf("group of %d, stride %d: key %d (%d bytes) = %#x, want %#x", count, stride, i, len(k), hs[i], w)
			}
			off += len(k)
		}
		if stride != 0 {
			off = count * stride
		}
		if got := int(uintptr(unsafe.Pointer(next)) - uintptr(unsafe.Pointer(p))); got != off {
			t.Fatalf("group of %d, stride %d: next key at %d, want %d", count, stride, got, off)
		}
		if hs[count] != 0x5a5a5a5a {
			t.Fatalf("group of %d: wrote past its digests", count)
		}
	}
}

// benchGroups returns 1024 groups of 32 URL-sized keys (40 to 120 bytes,
// triangular) back to back, and their lengths.
func benchGroups() ([]byte, []uint32) {
	rng := rand.New(rand.NewPCG(1, 1))
	ls := make([]uint32, 32*1024)
	var buf []byte
	for i := range ls {
		n := 40 + rng.IntN(41) + rng.IntN(41)
		ls[i] = uint32(n)
		for range n {
			buf = append(buf, byte(rng.Uint32()))
		}
	}
	return buf, ls
}

// BenchmarkHashGroup hashes groups of 32 URL-sized keys with the assembly,
// BenchmarkHashGroupGo the same keys with the Go version, one call a key
// (GOOS=js GOARCH=wasm; ns/key is what to read).
func BenchmarkHashGroup(b *testing.B) {
	buf, ls := benchGroups()
	var hs [group]uint64
	for b.Loop() {
		p := unsafe.SliceData(buf)
		for g := 0; g < len(ls); g += group {
			p = hashGroupAsm(p, &ls[g], group, 0, 0, &hs[0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ls)), "ns/key")
}

func BenchmarkHashGroupGo(b *testing.B) {
	buf, ls := benchGroups()
	var sink uint64
	for b.Loop() {
		off := 0
		for _, n := range ls {
			sink += xxh64Go(buf[off:off+int(n)], 0)
			off += int(n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ls)), "ns/key")
}
