package bloom

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// Offsets of the header fields; see the table in encoding.go.
const (
	offVersion  = 4
	offKind     = 5
	offHash     = 6
	offFlags    = 7
	offSeed     = 8
	offM        = 16
	offK        = 24
	offParts    = 28
	offCount    = 32
	offCapacity = 40
	offRate     = 48
	offPayload  = 56
)

var le = binary.LittleEndian

// sampleFilters returns a small filter of each kind with some keys in it.
func sampleFilters() []struct {
	name string
	f    set
} {
	classic := must(New(100, 0.01))
	seeded := must(NewWithSeed(100, 3, 0xfeedface))
	counting := must(NewCountingWithSize(100, 4))
	scalable := must(NewScalable(10, 0.01))
	window := must(NewWindow(20, 0.01, 3))
	blocked := must(NewBlocked(100, 0.01))
	for _, f := range []set{classic, seeded, counting, scalable, blocked} {
		addKeys(f, "a", 40)
	}
	counting.RemoveString("https://example.com/a/0")
	addKeys(window, "a", 20)
	window.Rotate()
	addKeys(window, "a", 30) // 20 again, 10 new
	return []struct {
		name string
		f    set
	}{
		{"classic", classic},
		{"seeded", seeded},
		{"counting", counting},
		{"scalable", scalable},
		{"window", window},
		{"blocked", blocked},
	}
}

// kindOf returns the kind of f as stored in its header.
func kindOf(f set) uint8 {
	switch f.(type) {
	case *Filter:
		return kindClassic
	case *CountingFilter:
		return kindCounting
	case *WindowFilter:
		return kindWindow
	case *BlockedFilter:
		return kindBlocked
	}
	return kindScalable
}

// newOfKind returns the zero value of a kind, ready for UnmarshalBinary.
func newOfKind(kind uint8) set {
	switch kind {
	case kindClassic:
		return new(Filter)
	case kindCounting:
		return new(CountingFilter)
	case kindWindow:
		return new(WindowFilter)
	case kindBlocked:
		return new(BlockedFilter)
	}
	return new(ScalableFilter)
}

// decodeFunc returns the decoder of a kind.
func decodeFunc(kind uint8) func(r io.Reader, maxBits uint64) (set, error) {
	switch kind {
	case kindClassic:
		return func(r io.Reader, maxBits uint64) (set, error) { return Decode(r, maxBits) }
	case kindCounting:
		return func(r io.Reader, maxBits uint64) (set, error) { return DecodeCounting(r, maxBits) }
	case kindWindow:
		return func(r io.Reader, maxBits uint64) (set, error) { return DecodeWindow(r, maxBits) }
	case kindBlocked:
		return func(r io.Reader, maxBits uint64) (set, error) { return DecodeBlocked(r, maxBits) }
	}
	return func(r io.Reader, maxBits uint64) (set, error) { return DecodeScalable(r, maxBits) }
}

// headerCapacity returns the capacity f's header holds: that of the first
// layer for a scalable filter.
func headerCapacity(f set) uint64 {
	if s, ok := f.(*ScalableFilter); ok {
		return s.InitialCapacity()
	}
	return f.Capacity()
}

// checkErr fails t unless err is io.ErrUnexpectedEOF itself or a message of
// this package.
func checkErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil && err != io.ErrUnexpectedEOF && !strings.HasPrefix(err.Error(), "bloom: ") {
		t.Errorf("%s: error %q is neither io.ErrUnexpectedEOF nor prefixed \"bloom: \"", what, err)
	}
}

// roundTrip encodes f every way there is, decodes it every way there is,
// and checks that each copy has the same bytes, stats and answers.
func roundTrip(t *testing.T, f set) {
	t.Helper()
	b := must(f.MarshalBinary())
	if uint64(len(b)) != f.EncodedSize() {
		t.Errorf("len(MarshalBinary) = %d; want EncodedSize %d", len(b), f.EncodedSize())
	}
	var w bytes.Buffer
	if n, err := f.WriteTo(&w); err != nil || n != int64(len(b)) || !bytes.Equal(w.Bytes(), b) {
		t.Errorf("WriteTo: wrote %d bytes, %v; want the %d bytes of MarshalBinary", n, err, len(b))
	}

	copies := map[string]set{}
	g := newOfKind(kindOf(f))
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	copies["UnmarshalBinary"] = g
	r := bytes.NewReader(append(b[:len(b):len(b)], "trailing"...))
	g, err := decodeFunc(kindOf(f))(r, f.NumBits())
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	copies["Decode"] = g
	if r.Len() != len("trailing") {
		t.Errorf("Decode left %d bytes; want the %d after the filter", r.Len(), len("trailing"))
	}
	if rf, ok := newOfKind(kindOf(f)).(io.ReaderFrom); ok {
		if n, err := rf.ReadFrom(bytes.NewReader(b)); err != nil || n != int64(len(b)) {
			t.Fatalf("ReadFrom: read %d bytes, %v; want %d, nil", n, err, len(b))
		}
		copies["ReadFrom"] = rf.(set)
	}

	for how, g := range copies {
		if got := must(g.MarshalBinary()); !bytes.Equal(got, b) {
			t.Errorf("%s: re-encoding differs from the input", how)
		}
		if g.Count() != f.Count() || g.NumBits() != f.NumBits() || g.SetBits() != f.SetBits() || g.Capacity() != f.Capacity() || g.TargetFPR() != f.TargetFPR() {
			t.Errorf("%s: Count, NumBits, SetBits, Capacity, TargetFPR = %d, %d, %d, %d, %g; want %d, %d, %d, %d, %g", how,
				g.Count(), g.NumBits(), g.SetBits(), g.Capacity(), g.TargetFPR(),
				f.Count(), f.NumBits(), f.SetBits(), f.Capacity(), f.TargetFPR())
		}
		var buf []byte
		for _, name := range []string{"a", "kept", "probe"} {
			for i := range 300 {
				buf = urlKey(buf, name, i)
				if got, want := g.Has(buf), f.Has(buf); got != want {
					t.Errorf("%s: Has(%q): got %v; want %v", how, buf, got, want)
				}
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) { roundTrip(t, tt.f) })
	}
	t.Run("empty", func(t *testing.T) {
		s := must(NewScalable(1, 0.01))
		for _, f := range []set{must(NewWithSize(1, 1)), must(NewCountingWithSize(1, 1)), s} {
			roundTrip(t, f)
		}
	})
}

// TestUnmarshalReplaces decodes into filters that are in use: every field is
// replaced.
func TestUnmarshalReplaces(t *testing.T) {
	src := must(New(100, 0.01))
	addKeys(src, "a", 50)
	dst := must(NewWithSize(5000, 9))
	addKeys(dst, "b", 500)
	if err := dst.UnmarshalBinary(must(src.MarshalBinary())); err != nil {
		t.Fatal(err)
	}
	if !dst.Equal(src) || dst.Count() != src.Count() || dst.Capacity() != 100 || dst.TargetFPR() != 0.01 {
		t.Errorf("UnmarshalBinary into a used filter did not replace it")
	}

	s := must(NewScalable(10, 0.01))
	addKeys(s, "a", 100)
	d := must(NewScalable(1000, 0.001))
	if err := d.UnmarshalBinary(must(s.MarshalBinary())); err != nil {
		t.Fatal(err)
	}
	if d.Layers() != s.Layers() || d.InitialCapacity() != 10 || d.TargetFPR() != 0.01 {
		t.Errorf("ScalableFilter.UnmarshalBinary into a used filter: Layers %d, InitialCapacity %d, TargetFPR %g; want %d, 10, 0.01",
			d.Layers(), d.InitialCapacity(), d.TargetFPR(), s.Layers())
	}
	// The copy keeps growing like the original.
	addKeys(s, "b", 1000)
	addKeys(d, "b", 1000)
	if !bytes.Equal(must(d.MarshalBinary()), must(s.MarshalBinary())) {
		t.Errorf("decoded scalable filter grew differently from the original")
	}
}

// TestHeader checks every header field of each kind against the format.
func TestHeader(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) {
			b := must(tt.f.MarshalBinary())
			want := map[int]uint64{
				offSeed:     0,
				offCount:    tt.f.Count(),
				offCapacity: headerCapacity(tt.f),
				offRate:     math.Float64bits(tt.f.TargetFPR()),
				offM:        tt.f.NumBits(),
				offPayload:  uint64(len(b) - headerSize - checksumSize),
			}
			var kind, hash byte = 0, HashXXH64
			var k, parts uint64
			switch f := tt.f.(type) {
			case *Filter:
				kind, k = kindClassic, uint64(f.NumHashes())
				want[offSeed] = f.Seed()
			case *CountingFilter:
				kind, k = kindCounting, uint64(f.NumHashes())
			case *ScalableFilter:
				kind, parts = kindScalable, uint64(f.Layers())
				var layers []byte
				for i := range f.Layers() {
					layers = append(layers, must(f.Layer(i).MarshalBinary())...)
				}
				if !bytes.Equal(b[headerSize:len(b)-checksumSize], layers) {
					t.Errorf("payload is not the layers' encodings one after another")
				}
			case *BlockedFilter:
				kind, k, hash = kindBlocked, 8, HashParquet
				if !bytes.Equal(b[headerSize:len(b)-checksumSize], f.ParquetBitset()) {
					t.Errorf("payload is not the Parquet bitset")
				}
			case *WindowFilter:
				kind, k, parts = kindWindow, uint64(f.NumHashes()), uint64(f.Generations())
				var gens []byte
				for i := range f.Generations() {
					gens = append(gens, must(f.Generation(i).MarshalBinary())...)
				}
				if !bytes.Equal(b[headerSize:len(b)-checksumSize], gens) {
					t.Errorf("payload is not the generations' encodings one after another")
				}
			}
			if string(b[:4]) != "EBLM" || b[offVersion] != 1 || b[offKind] != kind || b[offHash] != hash || b[offFlags] != 0 {
				t.Errorf("magic, version, kind, hash, flags: got %q, %d, %d, %d, %d; want \"EBLM\", 1, %d, %d, 0",
					b[:4], b[offVersion], b[offKind], b[offHash], b[offFlags], kind, hash)
			}
			if got := uint64(le.Uint32(b[offK:])); got != k {
				t.Errorf("k: got %d; want %d", got, k)
			}
			if got := uint64(le.Uint32(b[offParts:])); got != parts {
				t.Errorf("parts: got %d; want %d", got, parts)
			}
			for off, w := range want {
				if got := le.Uint64(b[off:]); got != w {
					t.Errorf("field at offset %d: got %d; want %d", off, got, w)
				}
			}
			if got, want := le.Uint64(b[len(b)-8:]), xxhash.Sum64(b[:len(b)-8]); got != want {
				t.Errorf("checksum: got %#x; want XXH64 of the rest %#x", got, want)
			}
		})
	}
}

// TestHeaderLargeM checks the header of a filter of more than 2^32 bits
// without allocating one.
func TestHeaderLargeM(t *testing.T) {
	for _, kind := range []uint8{kindClassic, kindCounting} {
		h := header{kind: kind, seed: 3, m: 1<<33 + 17, k: 13, count: 1 << 38, payload: 8 * payloadWords(kind, 1<<33+17)}
		got, err := decodeHeader(h.encode(), kind, MaxBits)
		if err != nil || got != h {
			t.Errorf("decodeHeader(%s with m = 2^33+17): got %+v, %v; want %+v", kindName(kind), got, err, h)
		}
	}
}

// TestPayloadLayout checks where each bit and counter lands in the payload:
// classic bit i is bit i%8 of payload byte i/8, counting counter i is the
// low nibble of byte i/2 when i is even and the high nibble when odd.
func TestPayloadLayout(t *testing.T) {
	f := must(NewWithSize(200, 3))
	c := must(NewCountingWithSize(50, 3))
	addKeys(f, "a", 20)
	addKeys(c, "a", 20)
	b := must(f.MarshalBinary())[headerSize:]
	for i := range f.NumBits() {
		set := f.words[i/64]&(1<<(i%64)) != 0
		if got := b[i/8]>>(i%8)&1 == 1; got != set {
			t.Errorf("bit %d: payload byte %d has it %v; want %v", i, i/8, got, set)
		}
	}
	for i := f.NumBits(); i < 8*uint64(len(b)-checksumSize); i++ {
		if b[i/8]>>(i%8)&1 != 0 {
			t.Errorf("bit %d beyond m is set", i)
		}
	}
	b = must(c.MarshalBinary())[headerSize:]
	for i := range c.NumBits() {
		if got := b[i/2] >> (4 * (i % 2)) & 0xf; got != c.Counter(i) {
			t.Errorf("counter %d: payload nibble has %d; want %d", i, got, c.Counter(i))
		}
	}
}

// reseal rewrites the checksum at the end of the record b.
func reseal(b []byte) {
	le.PutUint64(b[len(b)-8:], xxhash.Sum64(b[:len(b)-8]))
}

// firstLayer returns the encoding of the first layer inside the scalable
// filter encoding b.
func firstLayer(b []byte) []byte {
	l := b[headerSize:]
	return l[:recordSize(le.Uint64(l[offPayload:]))]
}

func TestDecodeErrors(t *testing.T) {
	encodings := map[string][]byte{}
	filters := map[string]set{}
	for _, tt := range sampleFilters() {
		encodings[tt.name], filters[tt.name] = must(tt.f.MarshalBinary()), tt.f
	}
	put64 := func(off int, v uint64) func([]byte) { return func(b []byte) { le.PutUint64(b[off:], v) } }
	put32 := func(off int, v uint32) func([]byte) { return func(b []byte) { le.PutUint32(b[off:], v) } }
	putByte := func(off int, v byte) func([]byte) { return func(b []byte) { b[off] = v } }
	flip := func(off int) func([]byte) {
		return func(b []byte) {
			if off < 0 {
				off += len(b)
			}
			b[off] ^= 0x10
		}
	}
	both := func(fs ...func([]byte)) func([]byte) {
		return func(b []byte) {
			for _, f := range fs {
				f(b)
			}
		}
	}
	for _, tt := range []struct {
		name   string
		input  string // a key of encodings
		decode string // the decoder to use, a key of filters; input's when empty
		change func([]byte)
		want   error
	}{
		{"bad magic", "classic", "", putByte(0, 'X'), ErrNotFilter},
		{"bad magic scalable", "scalable", "", putByte(3, 'm'), ErrNotFilter},
		{"version 0", "classic", "", putByte(offVersion, 0), ErrVersion},
		{"version 2", "counting", "", putByte(offVersion, 2), ErrVersion},
		{"hash scheme 2", "scalable", "", putByte(offHash, 2), ErrVersion},
		{"unknown flag", "classic", "", putByte(offFlags, 2), ErrCorrupt},
		{"dirty flag", "classic", "", both(putByte(offFlags, flagDirty), reseal), ErrChecksum},
		{"dirty flag on counting", "counting", "", both(putByte(offFlags, flagDirty), reseal), ErrCorrupt},
		{"dirty flag on window", "window", "", both(putByte(offFlags, flagDirty), reseal), ErrCorrupt},
		{"window as scalable", "window", "scalable", nil, ErrKind},
		{"scalable as window", "scalable", "window", nil, ErrKind},
		{"window without k", "window", "", put32(offK, 0), ErrCorrupt},
		{"window without generations", "window", "", put32(offParts, 0), ErrCorrupt},
		{"window m not a multiple of generations", "window", "", func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])+1) }, ErrCorrupt},
		{"window with more generations", "window", "", func(b []byte) { le.PutUint32(b[offParts:], le.Uint32(b[offParts:])+1) }, ErrCorrupt},
		{"window without capacity", "window", "", both(put64(offCapacity, 0), put64(offRate, 0)), ErrCorrupt},
		{"window payload length", "window", "", func(b []byte) { le.PutUint64(b[offPayload:], le.Uint64(b[offPayload:])+8) }, ErrCorrupt},
		{"window count off by one", "window", "", func(b []byte) { le.PutUint64(b[offCount:], le.Uint64(b[offCount:])+1) }, ErrCorrupt},
		{"window generation checksum", "window", "", flip(2*headerSize + 1), ErrChecksum},
		{"window checksum byte", "window", "", flip(-8), ErrChecksum},
		{"window generation of other k", "window", "", func(b []byte) {
			l := firstLayer(b)
			le.PutUint32(l[offK:], le.Uint32(l[offK:])+1)
			reseal(l)
			reseal(b)
		}, ErrCorrupt},
		{"window generation of other capacity", "window", "", func(b []byte) {
			l := firstLayer(b)
			le.PutUint64(l[offCapacity:], 7)
			reseal(l)
			reseal(b)
		}, ErrCorrupt},
		{"window generation of another seed", "window", "", func(b []byte) {
			l := firstLayer(b)
			l[offSeed] = 1
			reseal(l)
			reseal(b)
		}, ErrCorrupt},
		{"counting as classic", "counting", "classic", nil, ErrKind},
		{"classic as counting", "classic", "counting", nil, ErrKind},
		{"classic as scalable", "classic", "scalable", nil, ErrKind},
		{"scalable as classic", "scalable", "classic", nil, ErrKind},
		{"unknown kind", "classic", "", putByte(offKind, 9), ErrKind},
		{"blocked as classic", "blocked", "classic", nil, ErrKind},
		{"classic as blocked", "classic", "blocked", nil, ErrKind},
		{"hash scheme 3", "blocked", "", putByte(offHash, 3), ErrVersion},
		{"blocked with HashXXH64", "blocked", "", putByte(offHash, HashXXH64), ErrVersion},
		{"classic with HashParquet", "classic", "", putByte(offHash, HashParquet), ErrVersion},
		{"blocked m not a multiple of 256", "blocked", "", func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])-64) }, ErrCorrupt},
		{"blocked m one block more", "blocked", "", func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])+256) }, ErrCorrupt},
		{"blocked k 7", "blocked", "", put32(offK, 7), ErrCorrupt},
		{"blocked with 2^32+1 blocks", "blocked", "", func(b []byte) {
			le.PutUint64(b[offM:], MaxBits+BlockBits)
			le.PutUint64(b[offPayload:], (MaxBits+BlockBits)/8)
		}, ErrCorrupt},
		{"blocked seed", "blocked", "", put64(offSeed, 1), ErrCorrupt},
		{"blocked parts", "blocked", "", put32(offParts, 1), ErrCorrupt},
		{"blocked payload length", "blocked", "", func(b []byte) { le.PutUint64(b[offPayload:], le.Uint64(b[offPayload:])+32) }, ErrCorrupt},
		{"blocked dirty flag", "blocked", "", both(putByte(offFlags, flagDirty), reseal), ErrCorrupt},
		{"blocked payload byte", "blocked", "", flip(headerSize + 5), ErrChecksum},
		{"blocked count", "blocked", "", flip(offCount), ErrChecksum},
		{"payload byte", "classic", "", flip(headerSize + 3), ErrChecksum},
		{"counting payload byte", "counting", "", flip(headerSize), ErrChecksum},
		{"checksum byte", "seeded", "", flip(-1), ErrChecksum},
		{"seed", "seeded", "", flip(offSeed), ErrChecksum},
		{"count", "classic", "", flip(offCount), ErrChecksum},
		{"scalable layer payload byte", "scalable", "", flip(2*headerSize + 1), ErrChecksum},
		{"scalable checksum byte", "scalable", "", flip(-8), ErrChecksum},
		{"m zero", "classic", "", put64(offM, 0), ErrCorrupt},
		{"m above MaxBits", "classic", "", put64(offM, MaxBits+1), ErrCorrupt},
		{"m needs more payload", "classic", "", put64(offM, 64*13+1), ErrCorrupt},
		{"m needs less payload", "counting", "", put64(offM, 16*6), ErrCorrupt},
		{"k zero", "classic", "", put32(offK, 0), ErrCorrupt},
		{"k above MaxHashes", "counting", "", put32(offK, MaxHashes+1), ErrCorrupt},
		{"parts in classic", "classic", "", put32(offParts, 1), ErrCorrupt},
		{"counting count above MaxInt64", "counting", "", both(put64(offCount, 1<<63), reseal), ErrCorrupt},
		{"payload length", "classic", "", put64(offPayload, 8*12), ErrCorrupt},
		{"capacity without rate", "classic", "", put64(offRate, 0), ErrCorrupt},
		{"rate without capacity", "classic", "", put64(offCapacity, 0), ErrCorrupt},
		{"rate NaN", "classic", "", put64(offRate, math.Float64bits(math.NaN())), ErrCorrupt},
		{"rate one", "classic", "", put64(offRate, math.Float64bits(1)), ErrCorrupt},
		{"rate negative", "classic", "", put64(offRate, math.Float64bits(-0.01)), ErrCorrupt},
		{"scalable with k", "scalable", "", put32(offK, 3), ErrCorrupt},
		{"scalable without layers", "scalable", "", put32(offParts, 0), ErrCorrupt},
		{"scalable with more layers", "scalable", "", func(b []byte) { le.PutUint32(b[offParts:], le.Uint32(b[offParts:])+1) }, ErrCorrupt},
		{"scalable with fewer layers", "scalable", "", func(b []byte) { le.PutUint32(b[offParts:], le.Uint32(b[offParts:])-1) }, ErrCorrupt},
		{"scalable without capacity", "scalable", "", both(put64(offCapacity, 0), put64(offRate, 0)), ErrCorrupt},
		{"scalable m off by one", "scalable", "", func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])+1) }, ErrCorrupt},
		{"scalable count off by one", "scalable", "", func(b []byte) { le.PutUint64(b[offCount:], le.Uint64(b[offCount:])+1) }, ErrCorrupt},
		{"scalable payload too short", "scalable", "", put64(offPayload, 80), ErrCorrupt},
		{"scalable payload too long", "scalable", "", put64(offPayload, 1<<40), ErrCorrupt},
		{"scalable payload shorter than the layers", "scalable", "", func(b []byte) { le.PutUint64(b[offPayload:], le.Uint64(b[offPayload:])-8) }, ErrCorrupt},
		{"scalable payload longer than the layers", "scalable", "", func(b []byte) { le.PutUint64(b[offPayload:], le.Uint64(b[offPayload:])+8) }, ErrCorrupt},
		{"scalable layer of another seed", "scalable", "", func(b []byte) {
			l := firstLayer(b)
			l[offSeed] = 1
			reseal(l)
			reseal(b)
		}, ErrCorrupt},
		{"scalable layer without capacity", "scalable", "", func(b []byte) {
			l := firstLayer(b)
			le.PutUint64(l[offCapacity:], 0)
			le.PutUint64(l[offRate:], 0)
			reseal(l)
			reseal(b)
		}, ErrCorrupt},
		{"scalable layer is counting", "scalable", "", func(b []byte) {
			l := firstLayer(b)
			l[offKind] = kindCounting
			reseal(l)
			reseal(b)
		}, ErrKind},
		{"classic bit beyond m", "seeded", "", func(b []byte) {
			b[len(b)-checksumSize-1] |= 0x80 // bit 127 of m = 100
			reseal(b)
		}, ErrCorrupt},
		{"counting counter beyond m", "counting", "", func(b []byte) {
			b[len(b)-checksumSize-1] |= 0x10 // counter 111 of m = 100
			reseal(b)
		}, ErrCorrupt},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(encodings[tt.input])
			if tt.change != nil {
				tt.change(b)
			}
			dec := tt.decode
			if dec == "" {
				dec = tt.input
			}
			f := filters[dec]
			_, err := decodeFunc(kindOf(f))(bytes.NewReader(b), MaxBits)
			if !errors.Is(err, tt.want) {
				t.Errorf("decode: got %v; want %v", err, tt.want)
			}
			checkErr(t, "decode", err)

			// UnmarshalBinary fails the same way and leaves the filter as it was.
			before, count := must(f.MarshalBinary()), f.Count()
			if err := f.UnmarshalBinary(b); !errors.Is(err, tt.want) {
				t.Errorf("UnmarshalBinary: got %v; want %v", err, tt.want)
			}
			if !bytes.Equal(must(f.MarshalBinary()), before) || f.Count() != count {
				t.Errorf("failed UnmarshalBinary changed the filter")
			}
		})
	}
}

func TestDecodeTrailingBytes(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) {
			g := newOfKind(kindOf(tt.f))
			err := g.UnmarshalBinary(append(must(tt.f.MarshalBinary()), 0))
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("UnmarshalBinary with a trailing byte: got %v; want ErrCorrupt", err)
			}
			if g.NumBits() != 0 {
				t.Errorf("failed UnmarshalBinary changed the filter")
			}
		})
	}
}

// TestDecodeTruncated cuts small encodings at every length.
func TestDecodeTruncated(t *testing.T) {
	s := must(NewScalable(2, 0.1))
	f, c := must(NewWithSize(70, 2)), must(NewCountingWithSize(20, 2))
	w := must(NewWindow(3, 0.1, 2))
	bl := must(NewBlockedWithSize(2))
	for _, f := range []set{f, c, s, w, bl} {
		addKeys(f, "a", 8)
	}
	if s.Layers() < 3 {
		t.Fatalf("scalable Layers: got %d; want at least 3", s.Layers())
	}
	for _, tt := range []struct {
		name string
		f    set
	}{{"classic", f}, {"counting", c}, {"scalable", s}, {"window", w}, {"blocked", bl}} {
		t.Run(tt.name, func(t *testing.T) {
			b := must(tt.f.MarshalBinary())
			decode := decodeFunc(kindOf(tt.f))
			for n := range len(b) {
				if _, err := decode(bytes.NewReader(b[:n]), MaxBits); err != io.ErrUnexpectedEOF {
					t.Errorf("decode of the first %d of %d bytes: got %v; want io.ErrUnexpectedEOF", n, len(b), err)
				}
				g := newOfKind(kindOf(tt.f))
				if err := g.UnmarshalBinary(b[:n]); err != io.ErrUnexpectedEOF {
					t.Errorf("UnmarshalBinary of the first %d of %d bytes: got %v; want io.ErrUnexpectedEOF", n, len(b), err)
				}
				if g.NumBits() != 0 {
					t.Errorf("failed UnmarshalBinary changed the filter")
				}
			}
		})
	}
	for n := range 16 {
		var g Filter
		if _, err := g.ReadFrom(bytes.NewReader(must(f.MarshalBinary())[:n*5])); err != io.ErrUnexpectedEOF {
			t.Errorf("ReadFrom of the first %d bytes: got %v; want io.ErrUnexpectedEOF", n*5, err)
		}
	}
}

func TestDecodeBound(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) {
			b, m := must(tt.f.MarshalBinary()), tt.f.NumBits()
			decode := decodeFunc(kindOf(tt.f))
			if _, err := decode(bytes.NewReader(b), m); err != nil {
				t.Errorf("decode with bound m = %d: %v", m, err)
			}
			_, err := decode(bytes.NewReader(b), m-1)
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("decode with bound m-1: got %v; want ErrTooLarge", err)
			}
			checkErr(t, "decode", err)
		})
	}
	// UnmarshalBinary applies DefaultMaxBits; the header alone decides.
	for _, kind := range []uint8{kindClassic, kindCounting, kindScalable, kindWindow, kindBlocked} {
		h := header{kind: kind, m: DefaultMaxBits + 1, k: 3, payload: 8 * payloadWords(kind, DefaultMaxBits+1)}
		if kind == kindBlocked {
			h.m, h.k, h.payload = DefaultMaxBits+BlockBits, 8, (DefaultMaxBits+BlockBits)/8
		}
		if kind == kindScalable {
			h.k, h.parts, h.capacity, h.fpRate, h.payload = 0, 1, 1, 0.5, recordSize(h.payload)
		}
		if kind == kindWindow {
			h.parts, h.capacity, h.fpRate, h.payload = 1, 1, 0.5, recordSize(h.payload)
		}
		if err := newOfKind(kind).UnmarshalBinary(h.encode()); !errors.Is(err, ErrTooLarge) {
			t.Errorf("UnmarshalBinary of a %s header with DefaultMaxBits+1 bits: got %v; want ErrTooLarge", kindName(kind), err)
		}
	}
}

// hugeHeaders returns headers that claim MaxBits bits, each valid on its own.
func hugeHeaders() []struct {
	name string
	kind uint8
	b    []byte
} {
	classic := header{kind: kindClassic, m: MaxBits, k: 7, payload: 8 * payloadWords(kindClassic, MaxBits)}
	counting := header{kind: kindCounting, m: MaxBits, k: 7, payload: 8 * payloadWords(kindCounting, MaxBits)}
	scalable := header{kind: kindScalable, m: MaxBits, parts: MaxLayers, capacity: 1, fpRate: 0.5,
		payload: MaxLayers*(headerSize+checksumSize) + MaxBits/8}
	layer := classic
	layer.capacity, layer.fpRate = 1, 0.5
	window := header{kind: kindWindow, m: MaxBits, k: 7, parts: 1, capacity: 1, fpRate: 0.5, payload: recordSize(classic.payload)}
	blocked := header{kind: kindBlocked, m: MaxBits, k: 8, payload: MaxBits / 8} // 2^32 blocks
	return []struct {
		name string
		kind uint8
		b    []byte
	}{
		{"classic", kindClassic, classic.encode()},
		{"counting", kindCounting, counting.encode()},
		{"scalable", kindScalable, scalable.encode()},
		{"scalable with a huge layer", kindScalable, append(scalable.encode(), layer.encode()...)},
		{"window", kindWindow, window.encode()},
		{"window with a huge generation", kindWindow, append(window.encode(), layer.encode()...)},
		{"blocked", kindBlocked, blocked.encode()},
	}
}

// TestDecodeHugeHeader checks that a header claiming 2^40 bits costs little
// memory when the payload is not there.
func TestDecodeHugeHeader(t *testing.T) {
	for _, tt := range hugeHeaders() {
		t.Run(tt.name, func(t *testing.T) {
			decode := decodeFunc(tt.kind)
			if _, err := decode(bytes.NewReader(tt.b), MaxBits); err != io.ErrUnexpectedEOF {
				t.Errorf("decode of a lone header: got %v; want io.ErrUnexpectedEOF", err)
			}
			// 64 KiB of zeros: the decoder holds at most a few chunks.
			input := append(bytes.Clone(tt.b), make([]byte, 64<<10)...)
			allocated := totalAlloc(func() { decode(bytes.NewReader(input), MaxBits) })
			if allocated > 4<<20 {
				t.Errorf("decode of a header claiming 2^40 bits and 64 KiB: allocated %d bytes; want under 4 MiB", allocated)
			}
		})
	}
	t.Run("8 MiB of payload", func(t *testing.T) {
		const n = 8 << 20
		b := hugeHeaders()[0].b
		allocated := totalAlloc(func() {
			Decode(io.MultiReader(bytes.NewReader(b), io.LimitReader(zeros{}, n)), MaxBits)
		})
		if allocated > 3*n+2<<20 {
			t.Errorf("decode of a header claiming 2^40 bits and %d bytes: allocated %d bytes; want at most three times the input", n, allocated)
		}
	})
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// totalAlloc returns the bytes that f allocates.
func totalAlloc(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

var errWrite = errors.New("write failed")

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		n := w.n
		w.n = 0
		return n, errWrite
	}
	w.n -= len(b)
	return len(b), nil
}

func TestWriteToError(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) {
			size := int(tt.f.EncodedSize())
			for _, limit := range []int{0, 10, headerSize, headerSize + 1, size - checksumSize, size - 1} {
				n, err := tt.f.WriteTo(&failingWriter{n: limit})
				if err != errWrite || n != int64(limit) {
					t.Errorf("WriteTo failing after %d bytes: got %d, %v; want %d, %v", limit, n, err, limit, errWrite)
				}
			}
		})
	}
}

func TestInspect(t *testing.T) {
	for _, tt := range sampleFilters() {
		t.Run(tt.name, func(t *testing.T) {
			b := must(tt.f.MarshalBinary())
			info, err := Inspect(b[:HeaderSize], MaxBits)
			if err != nil {
				t.Fatal(err)
			}
			if want := kindName(kindOf(tt.f)); info.Kind != want {
				t.Errorf("Kind: got %q; want %q", info.Kind, want)
			}
			if info.Bits != tt.f.NumBits() || info.Count != tt.f.Count() || info.Size != uint64(len(b)) || info.Capacity != headerCapacity(tt.f) || info.FPRate != tt.f.TargetFPR() {
				t.Errorf("Inspect: got %+v; want Bits %d, Count %d, Size %d", info, tt.f.NumBits(), tt.f.Count(), len(b))
			}
			for _, bad := range [][]byte{b[:HeaderSize-1], append([]byte("XBLM"), b[4:HeaderSize]...)} {
				_, err := Inspect(bad, MaxBits)
				if err == nil {
					t.Errorf("Inspect of a bad header: got no error")
				}
				checkErr(t, "Inspect", err)
			}
			if _, err := Inspect(b, tt.f.NumBits()-1); !errors.Is(err, ErrTooLarge) {
				t.Errorf("Inspect with bound m-1: got %v; want ErrTooLarge", err)
			}
		})
	}
}

// The worked example of docs/format.md, between these markers, is generated
// by formatExample; UPDATE_GOLDEN=1 rewrites it.
const (
	formatDoc         = "../docs/format.md"
	formatExampleFrom = "<!-- generated by TestFormatDoc: begin -->\n"
	formatExampleTo   = "<!-- generated by TestFormatDoc: end -->\n"
)

// formatExample returns the worked example of docs/format.md: a tiny filter
// of each kind, the hash walk of two keys and the annotated bytes.
func formatExample() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	keys := []string{"https://example.com/", "https://例子.测试/"}
	f := must(New(5, 0.1))
	p("```go\nf, _ := bloom.New(5, 0.1) // m = %d bits, k = %d\n", f.NumBits(), f.NumHashes())
	for _, k := range keys {
		p("f.AddString(%q)\n", k)
		f.AddString(k)
	}
	p("```\n\nThe positions of each key (seed 0, m = %d):\n\n```text\n", f.NumBits())
	for _, k := range keys {
		h1 := sumString(k, 0)
		x, _ := bits.Mul64(h1, f.m)
		p("key %q (%d bytes of UTF-8)\n", k, len(k))
		p("  h1 = XXH64(key, seed 0) = %#016x\n", h1)
		p("  h2 = mix64(h1)          = %#016x\n", mix64(h1))
		y, _ := bits.Mul64(mix64(h1), f.m)
		p("  x  = hi64(h1 · m)       = %d\n", x)
		p("  y  = hi64(h2 · m)       = %d\n", y)
		for i := uint64(1); i <= uint64(f.k); i++ {
			p("  position %d = %-2d", i, x)
			x, y = (x+y)%f.m, (y+i)%f.m
			if i < uint64(f.k) {
				p("   then x = (x + y) mod m = %d, y = (y + %d) mod m = %d", x, i, y)
			}
			p("\n")
		}
	}
	data := must(f.MarshalBinary())
	p("```\n\nIts %d bytes, field by field:\n\n```text\noffset  bytes                    field\n", len(data))
	for _, row := range []struct {
		off, n int
		field  string
	}{
		{0, 4, "magic " + strconv.Quote(string(data[:4]))},
		{offVersion, 1, "format version 1"},
		{offKind, 1, "kind 1: classic"},
		{offHash, 1, "hash scheme 1: HashXXH64"},
		{offFlags, 1, "flags 0"},
		{offSeed, 8, fmt.Sprint("seed ", f.Seed())},
		{offM, 8, fmt.Sprint("m ", f.NumBits())},
		{offK, 4, fmt.Sprint("k ", f.NumHashes())},
		{offParts, 4, "parts 0"},
		{offCount, 8, fmt.Sprint("count ", f.Count())},
		{offCapacity, 8, fmt.Sprint("capacity ", f.Capacity())},
		{offRate, 8, fmt.Sprint("fpRate ", f.TargetFPR())},
		{offPayload, 8, fmt.Sprint("payload length ", len(data)-headerSize-checksumSize)},
		{headerSize, 8, fmt.Sprintf("payload word 0 = %#x: bits %v", f.words[0], setBitList(f.words[0]))},
		{len(data) - 8, 8, fmt.Sprintf("checksum = XXH64(bytes 0-%d, seed 0) = %#016x", len(data)-9, le.Uint64(data[len(data)-8:]))},
	} {
		p("%-7d %-23s  %s\n", row.off, fmt.Sprintf("% x", data[row.off:row.off+row.n]), row.field)
	}
	p("```\n\nThe same as a hex dump:\n\n```text\n%s```\n", hex.Dump(data))

	c := must(NewCountingWithSize(20, 2))
	for _, k := range keys {
		c.AddString(k)
	}
	c.AddString(keys[0])
	p("\nA counting filter, `NewCountingWithSize(20, 2)`, after adding the first key twice and the second once "+
		"(counters %v at positions %v and %v): 20 counters in %d words, low nibble first.\n\n```text\n%s```\n",
		counterList(c), c.Locations([]byte(keys[0])), c.Locations([]byte(keys[1])), len(c.words), hex.Dump(must(c.MarshalBinary())))

	s := must(NewScalable(1, 0.01))
	for _, k := range keys {
		s.AddString(k)
	}
	p("\nA scalable filter, `NewScalable(1, 0.01)`, after both keys: %d layers of %d and %d bits, each a complete classic "+
		"record inside the payload, at offsets 64 and %d.\n\n```text\n%s```\n",
		s.Layers(), s.Layer(0).NumBits(), s.Layer(1).NumBits(), headerSize+s.Layer(0).EncodedSize(), hex.Dump(must(s.MarshalBinary())))

	bl := must(NewBlockedWithSize(2))
	p("\nA blocked filter, `NewBlockedWithSize(2)` (m = 512, k = 8, hash scheme 2), after both keys. " +
		"Each key sets one bit in each of the eight 32-bit words of one block; the payload is the Parquet bitset, " +
		"32 bytes a block, each word little-endian:\n\n```text\n")
	for _, k := range keys {
		h := sumString(k, 0)
		bl.AddString(k)
		p("key %q: h = %#016x, block ((h >> 32) · 2) >> 32 = %d, bits (uint32(h) · salt[i]) >> 27 = %v\n",
			k, h, (h>>32)*2>>32, wordBits(uint32(h)))
	}
	p("```\n\n```text\n%s```\n", hex.Dump(must(bl.MarshalBinary())))
	return b.String()
}

// wordBits returns the bit that x sets in each word of a block.
func wordBits(x uint32) []uint32 {
	var l []uint32
	for _, s := range salt {
		l = append(l, x*s>>27)
	}
	return l
}

func setBitList(w uint64) []int {
	var l []int
	for i := range 64 {
		if w&(1<<i) != 0 {
			l = append(l, i)
		}
	}
	return l
}

func counterList(c *CountingFilter) []uint8 {
	var l []uint8
	for i := range c.NumBits() {
		l = append(l, c.Counter(i))
	}
	return l
}

func TestFormatDoc(t *testing.T) {
	doc, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), formatExampleFrom)
	_, after, ok2 := strings.Cut(rest, formatExampleTo)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers of the generated example", formatDoc)
	}
	want := formatExample()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		updated := before + formatExampleFrom + want + formatExampleTo + after
		if err := os.WriteFile(formatDoc, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, _, _ := strings.Cut(rest, formatExampleTo); got != want {
		t.Errorf("the worked example in %s is out of date; run UPDATE_GOLDEN=1 go test ./bloom -run TestFormatDoc. Want:\n%s", formatDoc, want)
	}
}
