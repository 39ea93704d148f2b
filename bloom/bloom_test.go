package bloom

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// A set is what the three kinds of filter have in common.
type set interface {
	Add(key []byte) bool
	AddString(key string) bool
	Has(key []byte) bool
	HasString(key string) bool
	Count() uint64
	SetBits() uint64
	NumBits() uint64
	Capacity() uint64
	TargetFPR() float64
	EncodedSize() uint64
	WriteTo(w io.Writer) (int64, error)
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// urlKey appends the i-th key of the named key set to buf[:0]:
// "https://example.com/<name>/<i>". Sets with different names never share a
// key, so keys of one set are certainly absent from a filter of another.
func urlKey(buf []byte, name string, i int) []byte {
	buf = append(buf[:0], "https://example.com/"...)
	buf = append(buf, name...)
	buf = append(buf, '/')
	return strconv.AppendInt(buf, int64(i), 10)
}

// addKeys adds keys 0..n-1 of the named set to f.
func addKeys(f interface{ Add([]byte) bool }, name string, n int) {
	var buf []byte
	for i := range n {
		buf = urlKey(buf, name, i)
		f.Add(buf)
	}
}

// A tester is what checkHasAll needs of a filter.
type tester interface {
	Has(key []byte) bool
	HasString(key string) bool
}

// checkHasAll fails t for every key 0..n-1 of the named set that f does not
// have: a false negative.
func checkHasAll(t *testing.T, f tester, name string, n int) {
	t.Helper()
	var buf []byte
	misses := 0
	for i := range n {
		buf = urlKey(buf, name, i)
		if !f.Has(buf) || !f.HasString(string(buf)) {
			if misses++; misses <= 5 {
				t.Errorf("Has(%q): got false; want true", buf)
			}
		}
	}
	if misses > 0 {
		t.Errorf("%d of %d added keys missing", misses, n)
	}
}

// countHas returns how many of keys 0..n-1 of the named set f has.
func countHas(f set, name string, n int) int {
	var buf []byte
	hits := 0
	for i := range n {
		buf = urlKey(buf, name, i)
		if f.Has(buf) {
			hits++
		}
	}
	return hits
}

func TestHas(t *testing.T) {
	f := must(New(100, 0.001))
	for _, k := range []string{"https://example.com/", "https://例子.测试/路径", ""} {
		f.AddString(k)
	}
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"https://example.com/", true},
		{"https://例子.测试/路径", true},
		{"", true},
		{"https://example.com", false},
		{"https://example.com/ ", false},
		{"https://example.org/", false},
	} {
		t.Run(strconv.Quote(tt.key), func(t *testing.T) {
			if got := f.HasString(tt.key); got != tt.want {
				t.Errorf("HasString(%q): got %v; want %v", tt.key, got, tt.want)
			}
			if got := f.Has([]byte(tt.key)); got != tt.want {
				t.Errorf("Has(%q): got %v; want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestNoFalseNegatives(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    uint64
		k    uint32
		keys int
	}{
		{"one bit", 1, 1, 100},
		{"7 bits, 20 hashes", 7, 20, 100},
		{"65 bits overfilled", 65, 3, 1000},
		{"1000 at 1%", 9586, 7, 1000},
		{"50k at 0.1%, 3x over", 718_900, 10, 150_000},
		{"above 2^31 bits", 1<<31 + 5, 4, 10_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.m > 1<<28 && testing.Short() {
				t.Skip("large filter skipped in -short mode")
			}
			f := must(NewWithSize(tt.m, tt.k))
			addKeys(f, "a", tt.keys)
			checkHasAll(t, f, "a", tt.keys)
		})
	}
}

func TestFalsePositiveRate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		n      int
		p      float64
		seed   uint64
		probes int
	}{
		{"1% of 200k", 200_000, 0.01, 0, 1_000_000},
		{"0.1% of 200k", 200_000, 0.001, 0, 2_000_000},
		{"1% of 200k, seeded", 200_000, 0.01, 0x5eed, 1_000_000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, k, err := Optimal(uint64(tt.n), tt.p)
			if err != nil {
				t.Fatal(err)
			}
			f := must(NewWithSeed(m, k, tt.seed))
			addKeys(f, "added", tt.n)
			got := float64(countHas(f, "absent", tt.probes)) / float64(tt.probes)
			if math.Abs(got-tt.p) > 0.1*tt.p {
				t.Errorf("false-positive rate at capacity: got %.5f; want %.5f ± 10%%", got, tt.p)
			}
			if est := f.EstimatedFPR(); math.Abs(est-tt.p) > 0.1*tt.p {
				t.Errorf("EstimatedFPR: got %.5f; want %.5f ± 10%%", est, tt.p)
			}
		})
	}
}

func TestAddReportsNew(t *testing.T) {
	f := must(New(1000, 0.001))
	var buf []byte
	for i := range 500 {
		buf = urlKey(buf, "a", i)
		if got := f.Add(buf); !got {
			t.Errorf("first Add(%q): got %v; want true", buf, got)
		}
		if got := f.Add(buf); got {
			t.Errorf("second Add(%q): got %v; want false", buf, got)
		}
		if got := f.AddString(string(buf)); got {
			t.Errorf("AddString(%q) after Add: got %v; want false", buf, got)
		}
	}
	if got := f.Count(); got != 500 {
		t.Errorf("Count: got %d; want 500", got)
	}
}

func TestStats(t *testing.T) {
	const n = 10_000
	f := must(New(n, 0.01))
	if got := f.Capacity(); got != n {
		t.Errorf("Capacity: got %d; want %d", got, n)
	}
	if got := f.TargetFPR(); got != 0.01 {
		t.Errorf("TargetFPR: got %g; want 0.01", got)
	}
	if f.Count() != 0 || f.SetBits() != 0 || f.FillRatio() != 0 || f.EstimatedCount() != 0 || f.EstimatedFPR() != 0 || f.OverCapacity() {
		t.Errorf("empty filter: Count %d, SetBits %d, FillRatio %g, EstimatedCount %g, EstimatedFPR %g, OverCapacity %v; want zeros and false",
			f.Count(), f.SetBits(), f.FillRatio(), f.EstimatedCount(), f.EstimatedFPR(), f.OverCapacity())
	}

	addKeys(f, "a", n)
	count, set := f.Count(), f.SetBits()
	switch {
	case count > n || count < n-n/100:
		t.Errorf("Count after %d distinct keys: got %d; want at most %d and at least %d", n, count, n, n-n/100)
	case set > count*uint64(f.NumHashes()):
		t.Errorf("SetBits: got %d; want at most k·Count = %d", set, count*uint64(f.NumHashes()))
	case f.FillRatio() != float64(set)/float64(f.NumBits()):
		t.Errorf("FillRatio: got %g; want SetBits/NumBits = %g", f.FillRatio(), float64(set)/float64(f.NumBits()))
	case math.Abs(f.FillRatio()-0.5) > 0.02:
		t.Errorf("FillRatio at capacity: got %.4f; want 0.5 ± 0.02", f.FillRatio())
	case math.Abs(f.EstimatedCount()-n) > 0.03*n:
		t.Errorf("EstimatedCount: got %.0f; want %d ± 3%%", f.EstimatedCount(), n)
	case math.Abs(f.EstimatedFPR()-0.01) > 0.002:
		t.Errorf("EstimatedFPR at capacity: got %.4f; want 0.01 ± 0.002", f.EstimatedFPR())
	case f.EstimatedFPR() != math.Pow(f.FillRatio(), float64(f.NumHashes())):
		t.Errorf("EstimatedFPR: got %g; want FillRatio^k", f.EstimatedFPR())
	case f.OverCapacity():
		t.Errorf("OverCapacity with Count %d ≤ Capacity %d: got true; want false", count, n)
	}

	var buf []byte
	for i := 0; f.Count() <= n; i++ {
		buf = urlKey(buf, "b", i)
		f.Add(buf)
	}
	if !f.OverCapacity() {
		t.Errorf("OverCapacity with Count %d > Capacity %d: got false; want true", f.Count(), n)
	}
}

func TestStatsExplicitSize(t *testing.T) {
	f := must(NewWithSize(1024, 5))
	if f.Capacity() != 0 || f.TargetFPR() != 0 {
		t.Errorf("Capacity, TargetFPR: got %d, %g; want 0, 0", f.Capacity(), f.TargetFPR())
	}
	var buf []byte
	for i := 0; 2*f.SetBits() <= f.NumBits(); i++ {
		if f.OverCapacity() {
			t.Fatalf("OverCapacity at fill %.3f: got true; want false", f.FillRatio())
		}
		buf = urlKey(buf, "a", i)
		f.Add(buf)
	}
	if !f.OverCapacity() {
		t.Errorf("OverCapacity at fill %.3f: got false; want true", f.FillRatio())
	}

	full := must(NewWithSize(10, 3))
	addKeys(full, "a", 1000)
	if got := full.EstimatedCount(); !math.IsInf(got, 1) {
		t.Errorf("EstimatedCount with every bit set: got %g; want +Inf", got)
	}
	if got := full.EstimatedFPR(); got != 1 {
		t.Errorf("EstimatedFPR with every bit set: got %g; want 1", got)
	}
}

func TestUnionIntersect(t *testing.T) {
	f, g := must(New(2000, 0.001)), must(New(2000, 0.001))
	addKeys(f, "f", 500)
	addKeys(f, "both", 500)
	addKeys(g, "g", 500)
	addKeys(g, "both", 500)

	u := must(New(2000, 0.001))
	for _, o := range []*Filter{f, g} {
		if err := u.Union(o); err != nil {
			t.Fatalf("Union: %v", err)
		}
	}
	for _, name := range []string{"f", "g", "both"} {
		checkHasAll(t, u, name, 500)
	}
	if got, want := u.Count(), uint64(math.Round(u.EstimatedCount())); got != want || math.Abs(float64(got)-1500) > 45 {
		t.Errorf("Count after Union: got %d; want round(EstimatedCount) = %d, 1500 ± 3%%", got, want)
	}

	i := must(New(2000, 0.001))
	if err := i.Union(f); err != nil {
		t.Fatal(err)
	}
	if err := i.Intersect(g); err != nil {
		t.Fatalf("Intersect: %v", err)
	}
	checkHasAll(t, i, "both", 500)
	if got := countHas(i, "f", 500) + countHas(i, "g", 500); got > 10 {
		t.Errorf("Intersect kept %d of 1000 keys of one side only; want at most 10", got)
	}
	// The estimate counts bits that keys of f and of g happen to share, so
	// it is above 500; Count is that estimate, rounded.
	if got, want := i.Count(), uint64(math.Round(i.EstimatedCount())); got != want || got < 475 {
		t.Errorf("Count after Intersect: got %d; want round(EstimatedCount) = %d, at least 475", got, want)
	}
}

func TestUnionIncompatible(t *testing.T) {
	f := must(NewWithSize(1000, 5))
	addKeys(f, "a", 100)
	before := must(f.MarshalBinary())
	for _, tt := range []struct {
		name    string
		m       uint64
		k       uint32
		seed    uint64
		wantErr string
	}{
		{"m", 1001, 5, 0, "bits"},
		{"k", 1000, 6, 0, "hash functions"},
		{"seed", 1000, 5, 1, "seeds"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := must(NewWithSeed(tt.m, tt.k, tt.seed))
			addKeys(o, "b", 100)
			for op, fn := range map[string]func(*Filter) error{"Union": f.Union, "Intersect": f.Intersect} {
				err := fn(o)
				if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%s with different %s: got %v; want ErrIncompatible mentioning %q", op, tt.name, err, tt.wantErr)
				}
				if !bytes.Equal(must(f.MarshalBinary()), before) {
					t.Errorf("%s with different %s changed f", op, tt.name)
				}
			}
			if f.Equal(o) || o.Equal(f) {
				t.Errorf("Equal with different %s: got true; want false", tt.name)
			}
		})
	}
}

func TestClear(t *testing.T) {
	f := must(New(1000, 0.01))
	empty := must(f.MarshalBinary())
	addKeys(f, "a", 1000)
	f.Clear()
	if got := countHas(f, "a", 1000); got != 0 {
		t.Errorf("Has after Clear: got true for %d keys; want none", got)
	}
	if f.Count() != 0 || f.SetBits() != 0 {
		t.Errorf("after Clear: Count %d, SetBits %d; want 0, 0", f.Count(), f.SetBits())
	}
	if got := must(f.MarshalBinary()); !bytes.Equal(got, empty) {
		t.Errorf("encoding after Clear differs from a new filter's")
	}
	if f.Capacity() != 1000 || f.TargetFPR() != 0.01 {
		t.Errorf("Clear changed Capacity or TargetFPR to %d, %g", f.Capacity(), f.TargetFPR())
	}
}

func TestEqual(t *testing.T) {
	f, g := must(New(1000, 0.01)), must(New(1000, 0.01))
	if !f.Equal(g) {
		t.Errorf("Equal of two new filters: got false; want true")
	}
	addKeys(f, "a", 100)
	if f.Equal(g) {
		t.Errorf("Equal after adding to one: got true; want false")
	}
	addKeys(g, "a", 100)
	g.AddString("https://example.com/a/1") // a repeat: no bit changes
	if !f.Equal(g) || !g.Equal(f) {
		t.Errorf("Equal with the same keys: got false; want true")
	}
	h := must(NewWithSize(f.NumBits(), f.NumHashes()))
	addKeys(h, "a", 100)
	if !f.Equal(h) {
		t.Errorf("Equal ignores capacity: got false; want true")
	}
}

func TestAddStringSameBits(t *testing.T) {
	keys := []string{"", "a", "https://example.com/", "https://例子.测试/路径/页面?查询=值", "🌸", strings.Repeat("x", 4096)}
	for _, seed := range []uint64{0, 1, math.MaxUint64} {
		byBytes := must(NewWithSeed(4096, 7, seed))
		byString := must(NewWithSeed(4096, 7, seed))
		for _, k := range keys {
			if got, want := sumString(k, seed), sum([]byte(k), seed); got != want {
				t.Errorf("sumString(%q, %d): got %#x; want sum of the bytes %#x", k, seed, got, want)
			}
			if got, want := byString.AddString(k), byBytes.Add([]byte(k)); got != want {
				t.Errorf("AddString(%q): got %v; want Add's %v", k, got, want)
			}
		}
		if !byBytes.Equal(byString) {
			t.Errorf("seed %d: AddString and Add set different bits", seed)
		}
	}
}

// TestSeed checks that the seed changes the positions of a key.
func TestSeed(t *testing.T) {
	f0 := must(NewWithSeed(1<<20, 8, 0))
	f1 := must(NewWithSeed(1<<20, 8, 1))
	if f1.Seed() != 1 {
		t.Errorf("Seed: got %d; want 1", f1.Seed())
	}
	key := []byte("https://example.com/")
	if a, b := f0.Locations(key), f1.Locations(key); slicesEqual(a, b) {
		t.Errorf("Locations(%q) with seeds 0 and 1: both %v; want different", key, a)
	}
}

func slicesEqual(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestConstructorsReject(t *testing.T) {
	for _, tt := range []struct {
		name string
		new  func() (any, error)
		arg  string
	}{
		{"NewWithSize m=0", func() (any, error) { return NewWithSize(0, 3) }, "m"},
		{"NewWithSize k=0", func() (any, error) { return NewWithSize(64, 0) }, "k"},
		{"NewWithSize m>MaxBits", func() (any, error) { return NewWithSize(MaxBits+1, 3) }, "m"},
		{"NewWithSize k>MaxHashes", func() (any, error) { return NewWithSize(64, MaxHashes+1) }, "k"},
		{"NewWithSeed m=0", func() (any, error) { return NewWithSeed(0, 3, 7) }, "m"},
		{"NewCountingWithSize m=0", func() (any, error) { return NewCountingWithSize(0, 3) }, "m"},
		{"NewCountingWithSize k>MaxHashes", func() (any, error) { return NewCountingWithSize(64, MaxHashes+1) }, "k"},
		{"New capacity=0", func() (any, error) { return New(0, 0.01) }, "capacity"},
		{"New p=0", func() (any, error) { return New(100, 0) }, "fpRate"},
		{"New p<0", func() (any, error) { return New(100, -0.5) }, "fpRate"},
		{"New p=1", func() (any, error) { return New(100, 1) }, "fpRate"},
		{"New p>1", func() (any, error) { return New(100, 2) }, "fpRate"},
		{"New p=NaN", func() (any, error) { return New(100, math.NaN()) }, "fpRate"},
		{"New p=+Inf", func() (any, error) { return New(100, math.Inf(1)) }, "fpRate"},
		{"New too large", func() (any, error) { return New(1<<40, 0.01) }, "capacity"},
		{"NewSync capacity=0", func() (any, error) { return NewSync(0, 0.01) }, "capacity"},
		{"NewSync p=0", func() (any, error) { return NewSync(100, 0) }, "fpRate"},
		{"NewSync p=1", func() (any, error) { return NewSync(100, 1) }, "fpRate"},
		{"NewSync p=NaN", func() (any, error) { return NewSync(100, math.NaN()) }, "fpRate"},
		{"NewSync too large", func() (any, error) { return NewSync(1<<40, 0.01) }, "capacity"},
		{"NewSyncWithSize m=0", func() (any, error) { return NewSyncWithSize(0, 3) }, "m"},
		{"NewSyncWithSize m>MaxBits", func() (any, error) { return NewSyncWithSize(MaxBits+1, 3) }, "m"},
		{"NewSyncWithSize k=0", func() (any, error) { return NewSyncWithSize(64, 0) }, "k"},
		{"NewSyncWithSeed k>MaxHashes", func() (any, error) { return NewSyncWithSeed(64, MaxHashes+1, 7) }, "k"},
		{"NewCounting capacity=0", func() (any, error) { return NewCounting(0, 0.01) }, "capacity"},
		{"NewCounting p=NaN", func() (any, error) { return NewCounting(100, math.NaN()) }, "fpRate"},
		{"NewScalable capacity=0", func() (any, error) { return NewScalable(0, 0.01) }, "capacity"},
		{"NewScalable p=1", func() (any, error) { return NewScalable(100, 1) }, "fpRate"},
		{"NewScalable p=NaN", func() (any, error) { return NewScalable(100, math.NaN()) }, "fpRate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.new()
			var ae *ArgError
			switch {
			case !errors.As(err, &ae):
				t.Fatalf("got %v, %v; want an *ArgError", f, err)
			case ae.Arg != tt.arg:
				t.Errorf("ArgError.Arg: got %q; want %q", ae.Arg, tt.arg)
			case !strings.HasPrefix(err.Error(), "bloom: invalid "+tt.arg+": "):
				t.Errorf("error %q: want prefix %q", err, "bloom: invalid "+tt.arg+": ")
			}
		})
	}
}

// TestLocationsAbove32Bits checks that positions use all 64 bits of
// arithmetic: for m above 2^32 they reach above 2^32, stay below m, and
// spread over the whole range.
func TestLocationsAbove32Bits(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    uint64
		high float64 // expected fraction of positions ≥ 2^32
	}{
		{"2^33+17", 1<<33 + 17, 0.5},
		{"2^36+5", 1<<36 + 5, 1 - 1.0/16},
		{"MaxBits", MaxBits, 1 - 1.0/256},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const keys, k = 2000, 13
			var buf []byte
			var pos []uint64
			high := 0
			buckets := make([]int, 64) // by pos/(m/64)
			for i := range keys {
				buf = urlKey(buf, "a", i)
				pos = appendLocations(pos[:0], sum(buf, 0), tt.m, k)
				for _, p := range pos {
					if p >= tt.m {
						t.Fatalf("position of %q: got %d; want < m = %d", buf, p, tt.m)
					}
					if p >= 1<<32 {
						high++
					}
					buckets[p/(tt.m/64+1)]++
				}
			}
			if got := float64(high) / (keys * k); math.Abs(got-tt.high) > 0.02 {
				t.Errorf("fraction of positions ≥ 2^32: got %.3f; want %.3f ± 0.02", got, tt.high)
			}
			for b, n := range buckets {
				if want := keys * k / 64; n < want/2 || n > 2*want {
					t.Errorf("positions in 64th %d of [0, m): got %d; want about %d", b, n, want)
				}
			}
		})
	}
}

// TestFilterAbove32Bits builds a real filter of more than 2^32 bits, so that
// some keys set bits at positions ≥ 2^32, and checks that every key is
// present. It takes 520 MiB.
func TestFilterAbove32Bits(t *testing.T) {
	switch {
	case unsafe.Sizeof(uintptr(0)) == 4:
		t.Skipf("platform limit: %s has a 32-bit address space, too small for a 520 MiB bitset next to the test binary", runtime.GOARCH)
	case runtime.GOOS == "js":
		t.Skip("platform limit: js/wasm has at most 4 GiB of linear memory, which only grows; a 520 MiB bitset is left to the host run")
	case testing.Short():
		t.Skip("520 MiB filter skipped in -short mode")
	}
	// 2^32 + 2^26 bits: 1.5% of positions fall above 2^32, some thousands
	// for 100k keys; m = 2^32+1000 would put almost none there.
	const m, k, keys = 1<<32 + 1<<26, 7, 100_000
	f := must(NewWithSize(m, k))
	defer f.Clear()
	addKeys(f, "a", keys)
	checkHasAll(t, f, "a", keys)

	high := 0
	var buf []byte
	for i := range keys {
		buf = urlKey(buf, "a", i)
		for _, p := range f.Locations(buf) {
			if p >= 1<<32 {
				high++
				if f.words[p>>6]&(1<<(p&63)) == 0 {
					t.Errorf("bit %d of %q: not set", p, buf)
				}
			}
		}
	}
	if high < 5000 {
		t.Errorf("positions ≥ 2^32: got %d; want about %d", high, keys*k/65)
	}
	if got := f.Count(); got != keys {
		t.Errorf("Count: got %d; want %d", got, keys)
	}
}

// TestConcurrent runs Add and Has from many goroutines on shared filters of
// each kind; go test -race checks it for data races.
func TestConcurrent(t *testing.T) {
	const workers, perWorker = 8, 2000
	c := must(NewCounting(workers*perWorker, 0.01))
	s := must(NewScalable(1000, 0.01)) // grows several times while in use
	for _, tt := range []struct {
		name string
		f    set
	}{
		{"sync", must(NewSync(workers*perWorker, 0.01))},
		{"counting", c},
		{"scalable", s},
		{"window", must(NewWindow(workers*perWorker, 0.01, 3))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					name := "w" + strconv.Itoa(w)
					other := "w" + strconv.Itoa((w+1)%workers)
					var buf []byte
					for i := range perWorker {
						buf = urlKey(buf, name, i)
						tt.f.Add(buf)
						if !tt.f.Has(buf) {
							t.Errorf("Has(%q) right after Add: got false; want true", buf)
						}
						tt.f.HasString(string(urlKey(buf, other, i)))
					}
				}()
			}
			wg.Wait()
			for w := range workers {
				checkHasAll(t, tt.f, "w"+strconv.Itoa(w), perWorker)
			}
			if got := tt.f.Count(); got > workers*perWorker || got < workers*perWorker*98/100 {
				t.Errorf("Count: got %d; want at most %d and at least 98%% of it", got, workers*perWorker)
			}
		})
	}
	if s.Layers() < 4 {
		t.Errorf("scalable Layers after %d keys from 1000: got %d; want at least 4", workers*perWorker, s.Layers())
	}
}

func TestAllocs(t *testing.T) {
	key, skey := []byte("https://example.com/some/page"), "https://example.com/other/page"
	seeded := must(NewWithSeed(1<<16, 7, 0x5eed))
	c := must(NewCounting(1000, 0.01))
	s := must(NewScalable(1000, 0.01))
	sf := must(NewSync(1000, 0.01))
	for _, f := range []set{must(New(1000, 0.01)), seeded, c, s, sf} {
		f.Add(key)
		f.AddString(skey)
	}
	for _, tt := range []struct {
		name string
		f    set
	}{
		{"classic", must(New(1000, 0.01))},
		{"sync", sf},
		{"seeded", seeded},
		{"counting", c},
		{"scalable", s},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for op, fn := range map[string]func(){
				"Add":       func() { tt.f.Add(key) },
				"AddString": func() { tt.f.AddString(skey) },
				"Has":       func() { tt.f.Has(key) },
				"HasString": func() { tt.f.HasString(skey) },
			} {
				if got := testing.AllocsPerRun(100, fn); got != 0 {
					t.Errorf("%s: got %v allocations; want 0", op, got)
				}
			}
		})
	}
	t.Run("counting Remove", func(t *testing.T) {
		fn := func() { c.Add(key); c.Remove(key); c.RemoveString(skey); c.AddString(skey) }
		if got := testing.AllocsPerRun(100, fn); got != 0 {
			t.Errorf("Add, Remove, RemoveString, AddString: got %v allocations; want 0", got)
		}
	})
}

// randomKeys returns n random 16-byte keys from a fixed seed.
func randomKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0))
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = make([]byte, 16)
		for j := range keys[i] {
			keys[i][j] = byte(r.Uint32())
		}
	}
	return keys
}

func TestRandomKeys(t *testing.T) {
	keys := randomKeys(20_000, 1)
	f := must(New(10_000, 0.01))
	for _, k := range keys[:10_000] {
		f.Add(k)
	}
	fp := 0
	for i, k := range keys {
		switch has := f.Has(k); {
		case i < 10_000 && !has:
			t.Errorf("Has(%x): got false; want true", k)
		case i >= 10_000 && has:
			fp++
		}
	}
	if fp > 150 {
		t.Errorf("false positives among 10000 random keys: got %d; want about 100", fp)
	}
}

// must returns v, and panics if err is not nil. It is for calls that fail
// only when the test itself is wrong.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
