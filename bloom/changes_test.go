package bloom

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
)

// TestAddChanges: the positions AddChanges reports are exactly the bits
// that turned on, and replaying them with ApplyChanges on a copy of the
// filter from before gives the same encoding.
func TestAddChanges(t *testing.T) {
	for _, m := range []uint64{1000, 4099, 1 << 16} {
		f, _ := NewWithSize(m, 7)
		for i := range 200 {
			f.AddString(fmt.Sprint("before-", i))
		}
		before := f.clone()
		var all []uint64
		for i := range 300 {
			key := []byte(fmt.Sprint("key-", i%250)) // 50 repeats
			old := f.clone()
			n := len(all)
			var fresh bool
			all, fresh = f.AddChanges(key, all)
			if want := old.Add(key); fresh != want {
				t.Fatalf("m=%d AddChanges(%q): new %v; Add says %v", m, key, fresh, want)
			}
			if !old.Equal(f) || old.Count() != f.Count() {
				t.Fatalf("m=%d AddChanges(%q) set other bits than Add", m, key)
			}
			prev := old.clone()
			prev.words = append([]uint64(nil), prev.words...)
			for _, p := range all[n:] {
				prev.words[p>>6] &^= 1 << (p & 63)
			}
			if f.SetBits()-uint64(len(all)-n) != prev.SetBits() {
				t.Fatalf("m=%d AddChanges(%q): %d positions reported, not each a bit it turned on", m, key, len(all)-n)
			}
		}
		if err := before.ApplyChanges(all, f.Count()); err != nil {
			t.Fatal(err)
		}
		a, _ := before.MarshalBinary()
		b, _ := f.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("m=%d: replayed changes give other bytes", m)
		}
		// Twice changes nothing more.
		before.ApplyChanges(all, f.Count())
		if a, _ = before.MarshalBinary(); !bytes.Equal(a, b) {
			t.Fatalf("m=%d: replaying twice changed the filter", m)
		}
		var ae *ArgError
		if err := before.ApplyChanges([]uint64{1, m}, 1); !errors.As(err, &ae) {
			t.Fatalf("m=%d ApplyChanges(m): got %v; want an *ArgError", m, err)
		}
		if a, _ = before.MarshalBinary(); !bytes.Equal(a, b) {
			t.Fatalf("m=%d: a refused ApplyChanges changed the filter", m)
		}
	}
}

// TestPayloadAt: ReadAt gives the encoding's bytes, any range; payload
// bytes written back with WritePayloadAt rebuild the filter; writes outside
// the payload or beyond m are refused and change nothing.
func TestPayloadAt(t *testing.T) {
	for _, m := range []uint64{64, 100, 1000, 4099} {
		f, _ := NewWithSize(m, 3)
		for i := range int(m / 4) {
			f.AddString(fmt.Sprint(i))
		}
		enc, _ := f.MarshalBinary()
		payload := enc[headerSize : len(enc)-checksumSize]
		if f.PayloadSize() != uint64(len(payload)) {
			t.Fatalf("PayloadSize: %d; want %d", f.PayloadSize(), len(payload))
		}
		g, _ := NewWithSize(m, 3)
		for _, step := range []int{1, 3, 8, 13, 70, len(enc)} {
			for off := 0; off < len(enc); off += step {
				buf := make([]byte, step)
				n, err := f.ReadAt(buf, int64(off))
				want := min(step, len(enc)-off)
				if n != want || (n < step) != (err == io.EOF) || (err != nil && err != io.EOF) {
					t.Fatalf("m=%d ReadAt(%d bytes, %d): %d, %v", m, step, off, n, err)
				}
				if !bytes.Equal(buf[:n], enc[off:off+n]) {
					t.Fatalf("m=%d ReadAt(%d, %d): other bytes than the encoding", m, step, off)
				}
				// The payload part of the range, written to g.
				lo, hi := max(off, headerSize), min(off+n, headerSize+len(payload))
				if lo < hi {
					if _, err := g.WritePayloadAt(buf[lo-off:hi-off], int64(lo-headerSize)); err != nil {
						t.Fatalf("m=%d WritePayloadAt(%d, %d): %v", m, hi-lo, lo-headerSize, err)
					}
				}
			}
		}
		if !g.Equal(f) {
			t.Fatalf("m=%d: the payload written back differs", m)
		}
		if n, err := f.ReadAt(make([]byte, 1), int64(len(enc))); n != 0 || err != io.EOF {
			t.Fatalf("ReadAt at the end: %d, %v; want 0, EOF", n, err)
		}
		var ae *ArgError
		for _, off := range []int64{-1, int64(len(payload))} {
			if _, err := g.WritePayloadAt([]byte{1}, off); !errors.As(err, &ae) {
				t.Fatalf("WritePayloadAt(1 byte, %d): %v; want an *ArgError", off, err)
			}
		}
		if m%64 != 0 {
			bad := []byte{payload[len(payload)-1] | 0x80}
			if _, err := g.WritePayloadAt(bad, int64(len(payload)-1)); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("m=%d WritePayloadAt beyond m: %v; want ErrCorrupt", m, err)
			}
		}
		if !g.Equal(f) {
			t.Fatalf("m=%d: a refused write changed the filter", m)
		}
	}
}

// TestStatsOnePass: every kind's Stats gives what its methods give one by one.
func TestStatsOnePass(t *testing.T) {
	classic, _ := New(1000, 0.01)
	sized, _ := NewWithSize(5000, 4)
	counting, _ := NewCounting(1000, 0.01)
	blocked, _ := NewBlocked(1000, 0.01)
	scalable, _ := NewScalable(100, 0.01)
	window, _ := NewWindow(300, 0.01, 3)
	type kind interface {
		AddString(string) bool
		NumBits() uint64
		Count() uint64
		SetBits() uint64
		EstimatedCount() float64
		FillRatio() float64
		EstimatedFPR() float64
		Capacity() uint64
		TargetFPR() float64
		OverCapacity() bool
		Stats() Stats
	}
	for name, f := range map[string]kind{"classic": classic, "sized": sized, "counting": counting, "blocked": blocked, "scalable": scalable, "window": window} {
		for _, n := range []int{0, 500, 1500} {
			for i := f.Count(); i < uint64(n); i++ {
				f.AddString(fmt.Sprint(name, i))
			}
			if w, ok := f.(*WindowFilter); ok && n == 1500 {
				w.Rotate()
			}
			got := f.Stats()
			want := Stats{
				Bits: f.NumBits(), Count: f.Count(), SetBits: f.SetBits(), EstimatedCount: f.EstimatedCount(),
				FillRatio: f.FillRatio(), EstimatedFPR: f.EstimatedFPR(), Capacity: f.Capacity(),
				TargetFPR: f.TargetFPR(), OverCapacity: f.OverCapacity(),
			}
			if h, ok := f.(interface{ NumHashes() uint32 }); ok {
				want.Hashes = h.NumHashes()
			}
			same := func(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*math.Abs(b) }
			if got.Bits != want.Bits || got.Hashes != want.Hashes || got.Count != want.Count || got.SetBits != want.SetBits ||
				!same(got.EstimatedCount, want.EstimatedCount) || got.FillRatio != want.FillRatio || !same(got.EstimatedFPR, want.EstimatedFPR) ||
				got.Capacity != want.Capacity || got.TargetFPR != want.TargetFPR || got.OverCapacity != want.OverCapacity {
				t.Errorf("%s after %d keys: Stats() = %+v; the methods give %+v", name, n, got, want)
			}
		}
	}
}
