package budget

import (
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// A filter of every kind with Bits(kind, size) bits, made with the largest
// payload its header may then claim, encodes to at most size bytes; with
// more bits, the smallest such filter is larger than size for some size.
func TestBitsBoundsTheEncoding(t *testing.T) {
	for _, size := range []uint64{100, 1000, 4096, 70_000, 1 << 20} {
		if m := Bits(1, size); m > 0 {
			f, err := bloom.NewWithSize(m, 3)
			if err != nil {
				t.Fatal(err)
			}
			if n := f.EncodedSize(); n > size {
				t.Errorf("classic of %d bits: %d bytes, more than %d", m, n, size)
			}
			g, _ := bloom.NewWithSize(m+64*8+64, 3)
			if g.EncodedSize() <= size {
				t.Errorf("classic of %d bits fits %d bytes: the bound is loose by more than a word", g.NumBits(), size)
			}
		}
		if m := Bits(2, size); m > 0 {
			f, err := bloom.NewCountingWithSize(m, 3)
			if err != nil {
				t.Fatal(err)
			}
			if n := f.EncodedSize(); n > size {
				t.Errorf("counting of %d counters: %d bytes, more than %d", m, n, size)
			}
		}
		if m := Bits(5, size); m >= bloom.BlockBits {
			f, err := bloom.NewBlockedWithSize(m / bloom.BlockBits)
			if err != nil {
				t.Fatal(err)
			}
			if n := f.EncodedSize(); n > size {
				t.Errorf("blocked of %d bits: %d bytes, more than %d", m, n, size)
			}
		}
	}
	// A scalable filter or a window may spend up to a record on each layer
	// or generation: with the most layers the format allows and m at the
	// bound, the payload's upper limit (decodeHeader) stays within size.
	size := uint64(1 << 20)
	for _, kind := range []uint8{3, 4} {
		m := Bits(kind, size)
		parts := uint64(bloom.MaxLayers)
		if kind == 4 {
			parts = bloom.MaxGenerations
		}
		if most := 72 + parts*(72+8) + m/8 + 8; most > size+8 {
			t.Errorf("kind %d: %d bits may encode to %d bytes, more than %d", kind, m, most, size)
		}
	}
	if Bits(1, 80) != 0 || Bits(4, 1000) != 0 {
		t.Error("a size below one record's overhead gives bits")
	}
}

func TestLoadRecord(t *testing.T) {
	if LoadRecord(Scratch-1) != 0 || LoadRecord(Scratch+10) != 5 {
		t.Error("LoadRecord")
	}
	// s shards of ShardRecord bytes each, one more copy, the router twice
	// and the scratch floor fit the room.
	for _, s := range []uint64{2, 3, 64, 65, 1 << 16} {
		room := uint64(56 << 20)
		r := ShardRecord(room, s)
		if used := (s+1)*r + 2*(72+8*((s+63)/64)) + Scratch; used > room {
			t.Errorf("%d shards: %d bytes, room %d", s, used, room)
		}
	}
}
