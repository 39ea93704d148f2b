package bloom

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// fuzzMaxBits bounds the filters the fuzzers decode, so that one input
// costs little.
const fuzzMaxBits = 1 << 16

// resealAll returns a copy of b with every checksum made right: those of the
// layers of a scalable filter, then the outer one. The fuzzer then reaches
// the checks behind the checksum instead of failing it at random.
func resealAll(b []byte) []byte {
	b = bytes.Clone(b)
	if len(b) < headerSize+checksumSize {
		return b
	}
	if b[offKind] == kindScalable || b[offKind] == kindWindow {
		for off := headerSize; off+headerSize <= len(b)-checksumSize; {
			room := len(b) - checksumSize - off - headerSize - checksumSize
			payload := le.Uint64(b[off+offPayload:])
			if room < 0 || payload > uint64(room) {
				break
			}
			n := int(recordSize(payload))
			reseal(b[off : off+n])
			off += n
		}
	}
	reseal(b)
	return b
}

func FuzzDecode(f *testing.F) {
	for _, tt := range sampleFilters() {
		b := must(tt.f.MarshalBinary())
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	for _, h := range hugeHeaders() {
		f.Add(h.b)
	}
	counting := must(must(NewCountingWithSize(10, 2)).MarshalBinary())
	le.PutUint64(counting[offCount:], 1<<63)
	f.Add(counting)
	f.Add([]byte{})
	f.Add([]byte("EBLM"))
	f.Add([]byte("EBLM\x01\x01\x01\x00garbage that is not a filter at all, long enough for a header......"))

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, input := range [][]byte{data, resealAll(data)} {
			for _, kind := range []uint8{kindClassic, kindCounting, kindScalable, kindWindow, kindBlocked} {
				r := bytes.NewReader(input)
				g, err := decodeFunc(kind)(r, fuzzMaxBits)
				if err != nil {
					checkErr(t, kindName(kind), err)
					continue
				}
				consumed := input[:len(input)-r.Len()]
				if re := must(g.MarshalBinary()); !bytes.Equal(re, consumed) {
					t.Fatalf("%s: re-encoding differs from the %d bytes decoded:\n got %x\nwant %x", kindName(kind), len(consumed), re, consumed)
				}
				if err := newOfKind(kind).UnmarshalBinary(consumed); err != nil {
					t.Fatalf("%s: UnmarshalBinary of what decoded: %v", kindName(kind), err)
				}
				// A decoded filter works: what is added is present.
				key := []byte("https://example.com/fuzz")
				g.Add(key)
				if !g.Has(key) {
					t.Fatalf("%s: Has(%q) after Add on a decoded filter: got false; want true", kindName(kind), key)
				}
			}
		}
	})
}

// splitKeys cuts data into at most 256 keys at each 0 byte.
func splitKeys(data []byte) [][]byte {
	keys := bytes.SplitN(data, []byte{0}, 257)
	return keys[:min(len(keys), 256)]
}

func FuzzAddHas(f *testing.F) {
	f.Add([]byte("https://example.com/\x00https://例子.测试/路径\x00\x00🌸"), uint64(0), uint16(64), uint8(3))
	f.Add([]byte("a\x00b\x00c\x00a\x00a"), uint64(1), uint16(1), uint8(20))
	f.Add(bytes.Repeat([]byte("key\x00"), 100), uint64(math.MaxUint64), uint16(1000), uint8(7))
	f.Add(binary.LittleEndian.AppendUint64(nil, 0xfeedface), uint64(42), uint16(4095), uint8(64))

	f.Fuzz(func(t *testing.T, data []byte, seed uint64, m uint16, k uint8) {
		bits, hashes := uint64(m)%4096+1, uint32(k)%MaxHashes+1
		byBytes := must(NewWithSeed(bits, hashes, seed))
		byString := must(NewWithSeed(bits, hashes, seed))
		counting := must(NewCountingWithSize(bits, hashes))
		keys := splitKeys(data)
		for _, key := range keys {
			if got, want := byString.AddString(string(key)), byBytes.Add(key); got != want {
				t.Fatalf("AddString(%q): got %v; Add gave %v", key, got, want)
			}
			counting.Add(key)
			if got, want := byBytes.Locations(key), appendLocations(nil, sumString(string(key), seed), bits, hashes); !slicesEqual(got, want) {
				t.Fatalf("Locations(%q): got %v; want %v", key, got, want)
			}
		}
		if !byBytes.Equal(byString) {
			t.Fatalf("AddString and Add set different bits")
		}
		// The split-block filter sets the bits of the Parquet spec.
		blocked, spec := must(NewBlockedWithSize(bits%64+1)), make(specFilter, bits%64+1)
		for _, key := range keys {
			if got, want := blocked.Add(key), !spec.check(specHash(key)); got != want {
				t.Fatalf("BlockedFilter.Add(%q): got %v; the spec's check says new = %v", key, got, want)
			}
			spec.insert(specHash(key))
			if !blocked.HasString(string(key)) {
				t.Fatalf("BlockedFilter.HasString(%q) after Add: got false; want true", key)
			}
		}
		if !bytes.Equal(blocked.ParquetBitset(), spec.bitset()) {
			t.Fatalf("BlockedFilter's bitset differs from the spec's")
		}
		for _, key := range keys {
			if !byBytes.Has(key) || !byBytes.HasString(string(key)) || !counting.Has(key) {
				t.Fatalf("Has(%q) of an added key: got false; want true", key)
			}
		}
		// Removing the first half, once per Add, leaves the second half
		// present: each of its keys was added once more than removed.
		half := len(keys) / 2
		for _, key := range keys[:half] {
			if !counting.Remove(key) {
				t.Fatalf("Remove(%q) of an added key: got false; want true", key)
			}
		}
		for _, key := range keys[half:] {
			if !counting.Has(key) {
				t.Fatalf("Has(%q) after removing the %d keys before it: got false; want true", key, half)
			}
		}
	})
}
