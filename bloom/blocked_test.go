package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// specFilter is the split block Bloom filter of parquet-format's
// BloomFilter.md, written from the pseudocode there and nothing else, to
// check BlockedFilter against: z blocks of eight 32-bit words.
type specFilter [][8]uint32

var specSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// mask: word i gets bit (x * salt[i]) >> 27, the product taken mod 2^32.
func specMask(x uint32) (result [8]uint32) {
	for i := range 8 {
		y := x * specSalt[i]
		result[i] |= 1 << (y >> 27)
	}
	return result
}

// specHash is XXH64 with a seed of 0 of the value's bytes.
func specHash(value []byte) uint64 {
	d := xxhash.NewWithSeed(0)
	d.Write(value)
	return d.Sum64()
}

func (s specFilter) block(x uint64) *[8]uint32 {
	i := ((x >> 32) * uint64(len(s))) >> 32
	return &s[i]
}

func (s specFilter) insert(x uint64) {
	b, masked := s.block(x), specMask(uint32(x))
	for i := range 8 {
		b[i] |= masked[i]
	}
}

func (s specFilter) check(x uint64) bool {
	b, masked := s.block(x), specMask(uint32(x))
	for i := range 8 {
		if b[i]&masked[i] != masked[i] {
			return false
		}
	}
	return true
}

// bitset is the filter as Parquet stores it: blocks in order, words in
// order, each word little-endian.
func (s specFilter) bitset() []byte {
	var b []byte
	for _, block := range s {
		for _, w := range block {
			b = binary.LittleEndian.AppendUint32(b, w)
		}
	}
	return b
}

// TestBlockedMatchesParquetSpec builds the same keys into BlockedFilter and
// into the spec's filter, and compares the bitsets after every key.
func TestBlockedMatchesParquetSpec(t *testing.T) {
	keys := append([]string(nil), specialKeys...)
	for i := range 300 {
		keys = append(keys, string(urlKey(nil, "spec", i)))
	}
	for _, blocks := range []uint64{1, 3, 64, 1000} {
		f := must(NewBlockedWithSize(blocks))
		s := make(specFilter, blocks)
		for i, key := range keys {
			if got, want := f.Has([]byte(key)), s.check(specHash([]byte(key))); got != want {
				t.Fatalf("blocks=%d: Has(%.40q) before adding: got %v; the spec's check gives %v", blocks, key, got, want)
			}
			if i%2 == 0 {
				f.AddString(key)
			} else {
				f.Add([]byte(key))
			}
			s.insert(specHash([]byte(key)))
			if !bytes.Equal(f.ParquetBitset(), s.bitset()) {
				t.Fatalf("blocks=%d: after adding %.40q the bitset differs from the spec's", blocks, key)
			}
		}
		g := must(BlockedFromParquet(s.bitset()))
		if !g.Equal(f) {
			t.Errorf("blocks=%d: BlockedFromParquet of the spec's bitset is not the filter", blocks)
		}
		// The payload of the encoding is the Parquet bitset.
		b := must(f.MarshalBinary())
		if !bytes.Equal(b[headerSize:len(b)-checksumSize], s.bitset()) {
			t.Errorf("blocks=%d: MarshalBinary's payload is not the Parquet bitset", blocks)
		}
	}
}

// TestBlockedParquetSizing checks blockedFPR against the numbers that
// BloomFilter.md gives for a split-block filter.
func TestBlockedParquetSizing(t *testing.T) {
	for _, tt := range []struct {
		bitsPerKey, fpr, tolerance float64
	}{
		{262144.0 / 26214, 0.0126, 0.01}, // 1024 blocks, 26 214 values: "around 1.26%"
		{5, 0.18, 0.01},                  // twice as many: "18%"
		{20, 0.0004, 0.06},               // half as many: "0.04%"
		{6.0, 0.10, 0.01},                // the table
		{10.5, 0.01, 0.02},
		{16.9, 0.001, 0.01},
		{26.4, 0.0001, 0.02},
		{41, 0.00001, 0.01},
	} {
		got := blockedFPR(BlockBits / tt.bitsPerKey)
		if math.Abs(got-tt.fpr) > tt.tolerance*tt.fpr {
			t.Errorf("rate at %.2f bits a key: got %.4g; Parquet's spec says %g", tt.bitsPerKey, got, tt.fpr)
		}
	}
}

func TestOptimalBlocks(t *testing.T) {
	for _, tt := range []struct {
		n      uint64
		p      float64
		blocks uint64
	}{
		{1, 0.5, 1},
		{1000, 0.01, 43},
		{1_000_000, 0.01, 42081},
		{1_000_000, 0.001, 67356},
		{10_000_000, 0.01, 420805},
		{1_000_000_000, 0.0001, 104989806},
	} {
		got, err := OptimalBlocks(tt.n, tt.p)
		if err != nil || got != tt.blocks {
			t.Errorf("OptimalBlocks(%d, %g): got %d, %v; want %d", tt.n, tt.p, got, err, tt.blocks)
			continue
		}
		// The smallest number of blocks that meets 0.9p.
		if r := EstimateBlockedFPR(got, tt.n); r > 0.9*tt.p || got > 1 && EstimateBlockedFPR(got-1, tt.n) <= 0.9*tt.p {
			t.Errorf("OptimalBlocks(%d, %g) = %d: expected rate %g, with one block less %g; want the smallest at most %g",
				tt.n, tt.p, got, r, EstimateBlockedFPR(got-1, tt.n), 0.9*tt.p)
		}
	}
}

func TestOptimalBlocksRejects(t *testing.T) {
	for _, tt := range []struct {
		n   uint64
		p   float64
		arg string
	}{
		{0, 0.01, "capacity"},
		{100, 0, "fpRate"},
		{100, 1, "fpRate"},
		{100, -0.5, "fpRate"},
		{100, 1.5, "fpRate"},
		{100, math.NaN(), "fpRate"},
		{100, math.Inf(1), "fpRate"},
		{1 << 40, 0.01, "capacity"},       // 2^40 keys need 2^35 blocks
		{math.MaxUint64, 0.5, "capacity"}, // absurd
		{1, 1e-300, "capacity"},           // below any rate 2^32 blocks reach
	} {
		_, err := OptimalBlocks(tt.n, tt.p)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tt.arg || !strings.HasPrefix(err.Error(), "bloom: ") {
			t.Errorf("OptimalBlocks(%d, %g): got %v; want an ArgError for %s", tt.n, tt.p, err, tt.arg)
		}
		if f, err2 := NewBlocked(tt.n, tt.p); f != nil || err2 == nil || err2.Error() != err.Error() {
			t.Errorf("NewBlocked(%d, %g): got %v, %v; want nil and the error of OptimalBlocks", tt.n, tt.p, f, err2)
		}
	}
}

func TestNewBlockedWithSizeRejects(t *testing.T) {
	for _, blocks := range []uint64{0, MaxBlocks + 1, math.MaxUint64} {
		f, err := NewBlockedWithSize(blocks)
		var ae *ArgError
		if f != nil || !errors.As(err, &ae) || ae.Arg != "blocks" {
			t.Errorf("NewBlockedWithSize(%d): got %v, %v; want an ArgError for blocks", blocks, f, err)
		}
	}
	// 2^32 blocks is the largest size: allowed where the address space
	// holds it (it is not allocated here).
	if err := checkBlocks(MaxBlocks); (err == nil) != (math.MaxInt > MaxBlocks*32) {
		t.Errorf("checkBlocks(MaxBlocks): got %v", err)
	}
}

// TestBlockedIndexMaxBlocks checks the block index at the largest size
// without allocating: every hash lands in a block below 2^32, and the
// index is the hash's upper half.
func TestBlockedIndexMaxBlocks(t *testing.T) {
	for _, h := range []uint64{0, 1, 1<<32 - 1, 1 << 32, math.MaxUint64, 0xdeadbeefcafef00d} {
		if i := (h >> 32) * MaxBlocks >> 32; i >= MaxBlocks || i != h>>32 {
			t.Errorf("block of %#x in 2^32 blocks: got %d", h, i)
		}
		if i := (h >> 32) * (MaxBlocks - 1) >> 32; i >= MaxBlocks-1 {
			t.Errorf("block of %#x in 2^32-1 blocks: got %d", h, i)
		}
	}
}

func TestBlockedFromParquetRejects(t *testing.T) {
	for _, n := range []int{0, 1, 31, 33, 48, 1000} {
		f, err := BlockedFromParquet(make([]byte, n))
		var ae *ArgError
		if f != nil || !errors.As(err, &ae) || ae.Arg != "bitset" {
			t.Errorf("BlockedFromParquet of %d bytes: got %v, %v; want an ArgError for bitset", n, f, err)
		}
	}
	for _, n := range []uint64{MaxParquetBytes + 32, 1 << 40} {
		var ae *ArgError
		if err := checkParquetLen(n); !errors.As(err, &ae) || ae.Arg != "bitset" {
			t.Errorf("a bitset of %d bytes: got %v; want an ArgError for bitset", n, err)
		}
	}
	if err := checkParquetLen(MaxParquetBytes); err != nil {
		t.Errorf("a bitset of MaxParquetBytes: got %v", err)
	}
}

// A filter every Parquet reader accepts: a power of two of blocks, the
// smallest one at least OptimalBlocks, and no more than Arrow's 128 MiB.
func TestParquetBlocks(t *testing.T) {
	for _, tt := range []struct {
		n      uint64
		p      float64
		blocks uint64
	}{
		{1, 0.5, 1},
		{1_000_000, 0.01, 65_536},
		{10_000_000, 0.01, 524_288},
		{1_000_000, 0.001, 131_072},
	} {
		got, err := ParquetBlocks(tt.n, tt.p)
		optimal := must(OptimalBlocks(tt.n, tt.p))
		if err != nil || got != tt.blocks || got&(got-1) != 0 || got < optimal || got/2 >= optimal {
			t.Errorf("ParquetBlocks(%d, %g): got %d, %v; want %d, the power of two in [%d, %d)", tt.n, tt.p, got, err, tt.blocks, optimal, 2*optimal)
		}
		if rate := EstimateBlockedFPR(got, tt.n); rate > 0.9*tt.p {
			t.Errorf("ParquetBlocks(%d, %g) = %d: expected rate %g; want at most %g", tt.n, tt.p, got, rate, 0.9*tt.p)
		}
		f := must(NewBlockedForParquet(tt.n, tt.p))
		if f.NumBlocks() != got || len(f.ParquetBitset()) != int(32*got) {
			t.Errorf("NewBlockedForParquet(%d, %g): %d blocks, %d bytes; want %d blocks", tt.n, tt.p, f.NumBlocks(), len(f.ParquetBitset()), got)
		}
	}
	// 2^22 blocks (128 MiB) is the most; 100 million keys at 1% need more.
	if got, err := ParquetBlocks(60_000_000, 0.01); err != nil || got != MaxParquetBytes/32 {
		t.Errorf("ParquetBlocks(60e6, 0.01): got %d, %v; want %d", got, err, MaxParquetBytes/32)
	}
	for _, tt := range []struct {
		n   uint64
		p   float64
		arg string
	}{{0, 0.01, "capacity"}, {1000, 0, "fpRate"}, {1000, 1, "fpRate"}, {100_000_000, 0.01, "capacity"}} {
		b, err := ParquetBlocks(tt.n, tt.p)
		f, err2 := NewBlockedForParquet(tt.n, tt.p)
		var ae *ArgError
		if b != 0 || !errors.As(err, &ae) || ae.Arg != tt.arg || f != nil || err2 == nil || err2.Error() != err.Error() {
			t.Errorf("ParquetBlocks(%d, %g): got %d, %v (NewBlockedForParquet: %v); want an ArgError for %s", tt.n, tt.p, b, err, err2, tt.arg)
		}
	}
}

func TestBlockedFromParquet(t *testing.T) {
	f := must(NewBlocked(500, 0.01))
	addKeys(f, "a", 500)
	bitset := f.ParquetBitset()
	if uint64(len(bitset)) != 32*f.NumBlocks() {
		t.Fatalf("len(ParquetBitset) = %d; want 32 · %d blocks", len(bitset), f.NumBlocks())
	}
	g := must(BlockedFromParquet(bitset))
	checkHasAll(t, g, "a", 500)
	if !g.Equal(f) || g.Capacity() != 0 || g.TargetFPR() != 0 {
		t.Errorf("BlockedFromParquet: Equal %v, Capacity %d, TargetFPR %g; want true, 0, 0", g.Equal(f), g.Capacity(), g.TargetFPR())
	}
	if c := float64(g.Count()); math.Abs(c-500) > 25 {
		t.Errorf("Count after BlockedFromParquet: got %g; want about 500", c)
	}
	// The filter owns a copy.
	bitset[0] ^= 0xff
	if !g.Equal(f) {
		t.Errorf("changing the bitset changed the filter")
	}
}

func TestBlockedAdd(t *testing.T) {
	f := must(NewBlocked(1000, 0.01))
	var buf []byte
	for i := range 1000 {
		buf = urlKey(buf, "a", i)
		if !f.Add(buf) {
			// A false positive: possible, but rare at this fill.
			t.Logf("Add(%q): not new", buf)
		}
		if f.Add(buf) || f.AddString(string(buf)) {
			t.Errorf("Add(%q) again: got true; want false", buf)
		}
	}
	checkHasAll(t, f, "a", 1000)
	if c := f.Count(); c < 990 || c > 1000 {
		t.Errorf("Count: got %d; want about 1000", c)
	}
	if f.OverCapacity() {
		t.Errorf("OverCapacity at capacity: got true")
	}
	for i := 0; f.Count() <= 1000; i++ {
		f.Add(urlKey(buf, "more", i))
	}
	if !f.OverCapacity() {
		t.Errorf("OverCapacity above capacity: got false")
	}
}

func TestBlockedAddStringSameBits(t *testing.T) {
	a, b := must(NewBlockedWithSize(50)), must(NewBlockedWithSize(50))
	for _, key := range specialKeys {
		if a.AddString(key) != b.Add([]byte(key)) {
			t.Errorf("AddString(%.40q) and Add differ", key)
		}
		if !a.Has([]byte(key)) || !b.HasString(key) {
			t.Errorf("Has(%.40q) after Add: got false; want true", key)
		}
	}
	if !a.Equal(b) {
		t.Errorf("AddString and Add set different bits")
	}
}

// TestBlockedFalsePositiveRate fills filters to capacity and measures the
// rate on keys never added: it must lie in [0.8p, p].
func TestBlockedFalsePositiveRate(t *testing.T) {
	for _, tt := range []struct {
		n, probes int
		p         float64
	}{
		{100_000, 1_000_000, 0.01},
		{100_000, 2_000_000, 0.001},
	} {
		f := must(NewBlocked(uint64(tt.n), tt.p))
		addKeys(f, "a", tt.n)
		got := float64(countHas(f, "absent", tt.probes)) / float64(tt.probes)
		if got < 0.8*tt.p || got > tt.p {
			t.Errorf("n=%d p=%g (%d blocks): measured rate %.5f; want in [%g, %g]", tt.n, tt.p, f.NumBlocks(), got, 0.8*tt.p, tt.p)
		}
		// EstimatedFPR, from the bits, and the expected rate, from n,
		// agree with the measurement.
		if est := f.EstimatedFPR(); math.Abs(est-got) > 0.06*got {
			t.Errorf("n=%d p=%g: EstimatedFPR %.5f; measured %.5f", tt.n, tt.p, est, got)
		}
		if exp := EstimateBlockedFPR(f.NumBlocks(), uint64(tt.n)); math.Abs(exp-got) > 0.06*got {
			t.Errorf("n=%d p=%g: EstimateBlockedFPR %.5f; measured %.5f", tt.n, tt.p, exp, got)
		}
		t.Logf("n=%d p=%g: %d blocks (%.2f bits a key), measured %.5f, EstimatedFPR %.5f, FillRatio^8 %.5f",
			tt.n, tt.p, f.NumBlocks(), float64(f.NumBits())/float64(tt.n), got, f.EstimatedFPR(), math.Pow(f.FillRatio(), 8))
	}
}

func TestBlockedEstimatedCount(t *testing.T) {
	for _, n := range []int{10, 1000, 20_000} {
		f := must(NewBlockedWithSize(400)) // 20 000 keys is 5 bits a key
		addKeys(f, "a", n)
		if est := f.EstimatedCount(); math.Abs(est-float64(n)) > 0.03*float64(n)+2 {
			t.Errorf("%d keys in 400 blocks: EstimatedCount %.1f", n, est)
		}
	}
	f := must(NewBlockedWithSize(1))
	for i := range f.words() {
		f.words()[i] = math.MaxUint64
	}
	if !math.IsInf(f.EstimatedCount(), 1) || f.EstimatedFPR() != 1 || f.FillRatio() != 1 {
		t.Errorf("full filter: EstimatedCount %g, EstimatedFPR %g, FillRatio %g; want +Inf, 1, 1", f.EstimatedCount(), f.EstimatedFPR(), f.FillRatio())
	}
	if f := must(NewBlockedWithSize(3)); f.EstimatedCount() != 0 || f.EstimatedFPR() != 0 || f.SetBits() != 0 {
		t.Errorf("empty filter: EstimatedCount %g, EstimatedFPR %g, SetBits %d; want 0", f.EstimatedCount(), f.EstimatedFPR(), f.SetBits())
	}
}

func TestBlockedStats(t *testing.T) {
	f := must(NewBlocked(1000, 0.01))
	if f.NumBlocks() != 43 || f.NumBits() != 43*256 || f.NumHashes() != 8 || f.Capacity() != 1000 || f.TargetFPR() != 0.01 {
		t.Errorf("NumBlocks, NumBits, NumHashes, Capacity, TargetFPR: got %d, %d, %d, %d, %g; want 43, %d, 8, 1000, 0.01",
			f.NumBlocks(), f.NumBits(), f.NumHashes(), f.Capacity(), f.TargetFPR(), 43*256)
	}
	f.AddString("x")
	if f.SetBits() < 1 || f.SetBits() > 8 || f.Count() != 1 {
		t.Errorf("one key: SetBits %d, Count %d; want 1 to 8 bits, 1", f.SetBits(), f.Count())
	}
	g := must(NewBlockedWithSize(10))
	if g.Capacity() != 0 || g.TargetFPR() != 0 || g.OverCapacity() {
		t.Errorf("explicit size: Capacity %d, TargetFPR %g, OverCapacity %v; want 0, 0, false", g.Capacity(), g.TargetFPR(), g.OverCapacity())
	}
	addKeys(g, "a", 400) // 6.4 bits a key: more than half the bits set
	if !g.OverCapacity() {
		t.Errorf("explicit size with fill %.2f: OverCapacity false; want true", g.FillRatio())
	}
}

func TestBlockedUnionIntersect(t *testing.T) {
	a, b := must(NewBlocked(1000, 0.01)), must(NewBlocked(1000, 0.01))
	addKeys(a, "a", 300)
	addKeys(b, "b", 300)
	both := must(NewBlocked(1000, 0.01))
	addKeys(both, "a", 300)
	addKeys(both, "b", 300)

	u := must(NewBlocked(1000, 0.01))
	must(0, u.Union(a))
	must(0, u.Union(b))
	if !u.Equal(both) {
		t.Errorf("Union of a and b differs from adding both")
	}
	if c := float64(u.Count()); math.Abs(c-600) > 30 {
		t.Errorf("Count after Union: got %g; want about 600", c)
	}
	checkHasAll(t, u, "a", 300)
	checkHasAll(t, u, "b", 300)

	must(0, both.Intersect(a))
	checkHasAll(t, both, "a", 300)
	if got := countHas(both, "b", 300); got > 30 {
		t.Errorf("after Intersect with a, %d of b's 300 keys present; want few", got)
	}

	other := must(NewBlockedWithSize(a.NumBlocks() + 1))
	before := a.ParquetBitset()
	for name, err := range map[string]error{"Union": a.Union(other), "Intersect": a.Intersect(other)} {
		if !errors.Is(err, ErrIncompatible) || !strings.HasPrefix(err.Error(), "bloom: ") {
			t.Errorf("%s of different sizes: got %v; want ErrIncompatible", name, err)
		}
	}
	if !bytes.Equal(a.ParquetBitset(), before) || a.Equal(other) {
		t.Errorf("a failed Union or Intersect changed the filter, or Equal ignores the size")
	}
}

func TestBlockedClear(t *testing.T) {
	f := must(NewBlocked(100, 0.01))
	addKeys(f, "a", 100)
	f.Clear()
	if f.Count() != 0 || f.SetBits() != 0 || f.HasString("https://example.com/a/1") {
		t.Errorf("after Clear: Count %d, SetBits %d; want 0, 0 and no keys", f.Count(), f.SetBits())
	}
	if f.NumBlocks() != 5 || f.Capacity() != 100 {
		t.Errorf("Clear changed the size or capacity")
	}
}

func TestBlockedAllocs(t *testing.T) {
	f := must(NewBlocked(1000, 0.01))
	key := []byte("https://example.com/allocs")
	s := "https://example.com/allocs/string"
	for name, fn := range map[string]func(){
		"Add":       func() { f.Add(key) },
		"AddString": func() { f.AddString(s) },
		"Has":       func() { f.Has(key) },
		"HasString": func() { f.HasString(s) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %g allocations; want 0", name, n)
		}
	}
}

func TestBlockedUnmarshalReplaces(t *testing.T) {
	src := must(NewBlocked(100, 0.01))
	addKeys(src, "a", 50)
	dst := must(NewBlockedWithSize(7))
	addKeys(dst, "b", 50)
	if err := dst.UnmarshalBinary(must(src.MarshalBinary())); err != nil {
		t.Fatal(err)
	}
	if !dst.Equal(src) || dst.Count() != src.Count() || dst.Capacity() != 100 || dst.TargetFPR() != 0.01 {
		t.Errorf("UnmarshalBinary into a used filter did not replace it")
	}
	var g BlockedFilter
	if n, err := g.ReadFrom(bytes.NewReader(must(src.MarshalBinary()))); err != nil || n != int64(src.EncodedSize()) || !g.Equal(src) {
		t.Errorf("ReadFrom: %d, %v, Equal %v; want %d, nil, true", n, err, g.Equal(src), src.EncodedSize())
	}
}

// TestBlockedLocationsMethod checks Locations against the computation the
// golden vectors pin (blockedLocations), and that Add sets exactly those bits
// of ParquetBitset.
func TestBlockedLocationsMethod(t *testing.T) {
	for _, blocks := range []uint64{1, 7, 1000} {
		f := must(NewBlockedWithSize(blocks))
		for i := range 200 {
			key := "https://example.com/locations/" + strings.Repeat("é", i%3) + string(rune('a'+i%26)) + string(rune('0'+i%10))
			got := f.Locations([]byte(key))
			if want := blockedLocations(key, blocks); !slicesEqual(got, want) {
				t.Fatalf("blocks=%d: Locations(%q): got %v; want %v", blocks, key, got, want)
			}
			f.Clear()
			f.AddString(key)
			var set []uint64
			for j, b := range f.ParquetBitset() {
				for bit := range 8 {
					if b>>bit&1 == 1 {
						set = append(set, 8*uint64(j)+uint64(bit))
					}
				}
			}
			if !slicesEqual(set, got) {
				t.Fatalf("blocks=%d: AddString(%q) set bits %v; Locations %v", blocks, key, set, got)
			}
		}
	}
}

// TestBlockedFPRLogFactorial checks blockedFPR, which sums ln j!, against
// the same sum with math.Lgamma.
func TestBlockedFPRLogFactorial(t *testing.T) {
	for lambda := 1e-6; lambda < 2048; lambda *= 1.05 {
		sd := math.Sqrt(lambda)
		want := 0.0
		for j := math.Max(0, math.Floor(lambda-12*sd-8)); j <= math.Ceil(lambda+12*sd+40); j++ {
			lg, _ := math.Lgamma(j + 1)
			set := -math.Expm1(j * math.Log1p(-1.0/32))
			want += math.Exp(j*math.Log(lambda)-lambda-lg) * math.Pow(set, 8)
		}
		want = math.Min(want, 1)
		if got := blockedFPR(lambda); math.Abs(got-want) > 1e-10*want {
			t.Errorf("blockedFPR(%g): got %g; want %g", lambda, got, want)
		}
	}
}
