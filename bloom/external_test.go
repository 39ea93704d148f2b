package bloom

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
)

func TestAppendLocations(t *testing.T) {
	for _, tt := range []struct {
		m    uint64
		k    uint32
		seed uint64
	}{
		{64, 3, 0}, {1000, 7, 0}, {9585059, 7, 0}, {9585059, 7, 42}, {7, 20, 0},
	} {
		f := must(NewWithSeed(tt.m, tt.k, tt.seed))
		dst := make([]uint64, 0, 64)
		for i := range 2000 {
			key := []byte("https://example.org/" + strconv.Itoa(i))
			dst = AppendLocations(dst[:0], key, tt.m, tt.k, tt.seed)
			if want := f.Locations(key); !slicesEqual(dst, want) {
				t.Fatalf("m=%d k=%d seed=%d: AppendLocations(%q): got %v; want %v", tt.m, tt.k, tt.seed, key, dst, want)
			}
		}
	}
	// Above 2^32 bits, where no Filter is made here, against the scheme.
	key := []byte("https://example.org/big")
	if got, want := AppendLocations(nil, key, 1<<33+17, 13, 0), appendLocations(nil, sum(key, 0), 1<<33+17, 13); !slicesEqual(got, want) {
		t.Errorf("AppendLocations at m=2^33+17: got %v; want %v", got, want)
	}
	if got := AppendLocations([]uint64{5}, key, 64, 3, 0); len(got) != 4 || got[0] != 5 {
		t.Errorf("AppendLocations([5], ...): got %v; want 5 and three positions", got)
	}
}

func TestAppendLocationsPanics(t *testing.T) {
	for _, tt := range []struct {
		m uint64
		k uint32
	}{{0, 3}, {MaxBits + 1, 3}, {64, 0}, {64, MaxHashes + 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AppendLocations(m=%d, k=%d): no panic", tt.m, tt.k)
				}
			}()
			AppendLocations(nil, []byte("x"), tt.m, tt.k, 0)
		}()
	}
}

// payloadOf returns the payload of a classic filter's encoding.
func payloadOf(t *testing.T, f *Filter) []byte {
	t.Helper()
	b := must(f.MarshalBinary())
	return b[HeaderSize : len(b)-checksumSize]
}

func TestWriteClassic(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    *Filter
	}{
		{"sized", must(New(30000, 0.01))},
		{"explicit", must(NewWithSeed(1<<23+5, 5, 99))},
		{"one word", must(NewWithSize(64, 3))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 20000 {
				tt.f.AddString("https://example.org/" + strconv.Itoa(i))
			}
			want := must(tt.f.MarshalBinary())
			info := Info{Seed: tt.f.Seed(), Bits: tt.f.NumBits(), Hashes: tt.f.NumHashes(), Count: tt.f.Count(),
				Capacity: tt.f.Capacity(), FPRate: tt.f.TargetFPR()}
			var buf bytes.Buffer
			n, err := WriteClassic(&buf, info, bytes.NewReader(payloadOf(t, tt.f)))
			if err != nil || n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("WriteClassic: %d bytes, %v; want the %d bytes of MarshalBinary", n, err, len(want))
			}
			g, err := Decode(&buf, MaxBits)
			if err != nil || !g.Equal(tt.f) {
				t.Fatalf("Decode(WriteClassic(...)): %v, equal %v", err, err == nil && g.Equal(tt.f))
			}
		})
	}
}

func TestWriteClassicErrors(t *testing.T) {
	f := must(New(1000, 0.01)) // m = 9586: the last word has unused bits
	good := Info{Bits: f.NumBits(), Hashes: f.NumHashes(), Capacity: 1000, FPRate: 0.01}
	payload := payloadOf(t, f)
	padded := bytes.Clone(payload)
	padded[len(padded)-1] |= 0x80
	var argErr *ArgError
	for _, tt := range []struct {
		name    string
		info    Info
		payload []byte
		check   func(error) bool
	}{
		{"m 0", Info{Hashes: 3}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"k 0", Info{Bits: 64}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"kind", Info{Kind: "counting", Bits: 64, Hashes: 3}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"layers", Info{Bits: 64, Hashes: 3, Layers: 2}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"dirty", Info{Bits: 64, Hashes: 3, Dirty: true}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"rate without capacity", Info{Bits: 64, Hashes: 3, FPRate: 0.1}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"rate 1", Info{Bits: 64, Hashes: 3, Capacity: 5, FPRate: 1}, payload, func(err error) bool { return errors.As(err, &argErr) }},
		{"short", good, payload[:len(payload)-1], func(err error) bool { return err == io.ErrUnexpectedEOF }},
		{"empty", good, nil, func(err error) bool { return err == io.ErrUnexpectedEOF }},
		{"bits beyond m", good, padded, func(err error) bool { return errors.Is(err, ErrCorrupt) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := WriteClassic(&buf, tt.info, bytes.NewReader(tt.payload))
			if !tt.check(err) {
				t.Fatalf("WriteClassic: got %v", err)
			}
			if argErr != nil && buf.Len() != 0 {
				t.Errorf("WriteClassic wrote %d bytes before refusing its arguments", buf.Len())
			}
			argErr = nil
		})
	}
}
