package bloom

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The golden vectors pin the hash scheme, the answers and the encoding of
// every kind. The Go tests and the npm module's tests read the same file.
const vectorsPath = "testdata/vectors.json"

type vectorFile struct {
	Comment   string         `json:"comment"`
	Keys      []string       `json:"keys"`
	Locations []locationCase `json:"locations"`
	Filters   []filterCase   `json:"filters"`
	// The split-block kind (5) apart, so that readers that do not know it
	// yet can leave it out.
	BlockedLocations []blockedLocationCase `json:"blockedLocations"`
	Blocked          []filterCase          `json:"blocked"`
}

// blockedLocationCase gives, for a split-block filter of Blocks blocks, the
// eight bits of each key: 256·block + 32·word + bit, word 0 to 7.
type blockedLocationCase struct {
	Blocks    uint64     `json:"blocks"`
	Positions [][]uint64 `json:"positions"` // one array a key, in Keys order
}

type locationCase struct {
	M         uint64     `json:"m"`
	K         uint32     `json:"k"`
	Positions [][]uint64 `json:"positions"` // one array a key, in Keys order
}

type filterCase struct {
	Name          string       `json:"name"`
	Kind          string       `json:"kind"`
	Params        filterParams `json:"params"`
	Added         []int        `json:"added"` // indexes into Keys, in insertion order
	AddResults    []bool       `json:"addResults"`
	Rotations     []int        `json:"rotations,omitempty"` // window only: Rotate after this many adds
	Removed       []int        `json:"removed,omitempty"`   // counting only
	RemoveResults []bool       `json:"removeResults,omitempty"`
	Probes        []string     `json:"probes"`
	Has           []bool       `json:"has"`
	Bits          uint64       `json:"bits"`
	Hashes        uint32       `json:"hashes"`
	Count         uint64       `json:"count"`
	SetBits       uint64       `json:"setBits"`
	Base64        string       `json:"base64"`

	// sync makes a classic case run on a SyncFilter, which must give the
	// same answers and the same bytes.
	sync bool
}

// filterParams holds one of {capacity, errorRate}, {bits, hashes},
// {initialCapacity, errorRate}, {capacityPerGeneration, errorRate,
// generations} or {blocks}.
type filterParams struct {
	Capacity              uint64  `json:"capacity,omitempty"`
	InitialCapacity       uint64  `json:"initialCapacity,omitempty"`
	CapacityPerGeneration uint64  `json:"capacityPerGeneration,omitempty"`
	ErrorRate             float64 `json:"errorRate,omitempty"`
	Generations           int     `json:"generations,omitempty"`
	Bits                  uint64  `json:"bits,omitempty"`
	Hashes                uint32  `json:"hashes,omitempty"`
	Blocks                uint64  `json:"blocks,omitempty"`
}

// newFilter makes the empty filter that c describes.
func (c *filterCase) newFilter() (set, error) {
	p := c.Params
	switch {
	case c.Kind == "classic" && c.sync && p.Capacity > 0:
		return NewSync(p.Capacity, p.ErrorRate)
	case c.Kind == "classic" && c.sync:
		return NewSyncWithSize(p.Bits, p.Hashes)
	case c.Kind == "classic" && p.Capacity > 0:
		return New(p.Capacity, p.ErrorRate)
	case c.Kind == "classic":
		return NewWithSize(p.Bits, p.Hashes)
	case c.Kind == "counting" && p.Capacity > 0:
		return NewCounting(p.Capacity, p.ErrorRate)
	case c.Kind == "counting":
		return NewCountingWithSize(p.Bits, p.Hashes)
	case c.Kind == "scalable":
		return NewScalable(p.InitialCapacity, p.ErrorRate)
	case c.Kind == "window":
		return NewWindow(p.CapacityPerGeneration, p.ErrorRate, p.Generations)
	case c.Kind == "blocked" && p.Capacity > 0:
		return NewBlocked(p.Capacity, p.ErrorRate)
	case c.Kind == "blocked":
		return NewBlockedWithSize(p.Blocks)
	}
	return nil, fmt.Errorf("unknown kind %q", c.Kind)
}

func numHashes(f set) uint32 {
	if h, ok := f.(interface{ NumHashes() uint32 }); ok {
		return h.NumHashes()
	}
	return 0
}

// run builds the filter from c's params, adds and removes c's keys, probes
// it, and fills in every result field of c from what happened.
func (c *filterCase) run(keys []string) (set, error) {
	f, err := c.newFilter()
	if err != nil {
		return nil, err
	}
	c.AddResults = c.AddResults[:0]
	rotate := func(j int) {
		for _, r := range c.Rotations {
			if r == j {
				f.(*WindowFilter).Rotate()
			}
		}
	}
	for j, i := range c.Added {
		rotate(j)
		c.AddResults = append(c.AddResults, f.AddString(keys[i]))
	}
	rotate(len(c.Added))
	if len(c.Removed) > 0 {
		cf := f.(*CountingFilter)
		c.RemoveResults = c.RemoveResults[:0]
		for _, i := range c.Removed {
			c.RemoveResults = append(c.RemoveResults, cf.RemoveString(keys[i]))
		}
	}
	c.Has = c.Has[:0]
	for _, p := range c.Probes {
		c.Has = append(c.Has, f.HasString(p))
	}
	c.Bits, c.Hashes, c.Count, c.SetBits = f.NumBits(), numHashes(f), f.Count(), f.SetBits()
	b, err := f.MarshalBinary()
	c.Base64 = base64.StdEncoding.EncodeToString(b)
	return f, err
}

// pageKey is the i-th generated key of the vectors.
func pageKey(i int) string { return "https://example.com/page/" + strconv.Itoa(i) }

// absentKey is the i-th key that no filter of the vectors holds.
func absentKey(i int) string { return "https://example.com/absent/" + strconv.Itoa(i) }

// Keys of the vectors: the first few cover encodings, then 150 page keys.
var specialKeys = []string{
	"https://example.com/",
	"https://example.com/path/to/page?query=1&other=two#fragment",
	"http://localhost:8080/a/b/c",
	"https://例子.测试/路径/页面?查询=值",
	"https://中文.example/新闻/2024/文章.html",
	"https://example.com/😀/🚀?emoji=🎉",
	"https://example.com/𠮷野家",        // a character outside the BMP, a surrogate pair in JS
	"https://example.com/caf\u00e9",  // é precomposed (NFC)
	"https://example.com/cafe\u0301", // é decomposed (NFD): other bytes, other bits
	"",
	"a",
	"tab\tnewline\nNUL\x00end",
	longKey,
}

// longKey is an ASCII key of 4096 bytes.
var longKey = ("https://example.com/" + strings.Repeat("0123456789abcdef", 256))[:4096]

const pageKeys = 150

// generateVectors computes the whole vector file.
func generateVectors() (*vectorFile, error) {
	v := &vectorFile{
		Comment: "Golden vectors of the edgebloom bloom package, shared by the Go and JavaScript tests. " +
			"Regenerate with `UPDATE_GOLDEN=1 go test ./bloom -run TestVectors` from the repository root and review the diff; " +
			"see bloom/testdata/README.md. Keys are hashed as their UTF-8 bytes with seed 0; base64 is standard, padded.",
		Keys: append([]string(nil), specialKeys...),
	}
	for i := range pageKeys {
		v.Keys = append(v.Keys, pageKey(i))
	}
	nSpecial := len(specialKeys)
	page := func(i int) int { return nSpecial + i }
	indexes := func(from, to int) []int {
		var s []int
		for i := from; i < to; i++ {
			s = append(s, i)
		}
		return s
	}
	absent := func(from, to int) []string {
		var s []string
		for i := from; i < to; i++ {
			s = append(s, absentKey(i))
		}
		return s
	}
	keysAt := func(idx []int) []string {
		var s []string
		for _, i := range idx {
			s = append(s, v.Keys[i])
		}
		return s
	}

	for _, mk := range []struct {
		m uint64
		k uint32
	}{{64, 3}, {1000, 7}, {9_585_059, 7}, {1<<33 + 17, 13}, {7, 20}} {
		c := locationCase{M: mk.m, K: mk.k}
		for _, key := range v.Keys {
			c.Positions = append(c.Positions, appendLocations(nil, sumString(key, 0), mk.m, mk.k))
		}
		v.Locations = append(v.Locations, c)
	}

	// Every special key and 100 page keys, then two repeats.
	classicAdded := append(indexes(0, page(100)), 0, page(5))
	// Page keys 0-149 in 1024 bits: about 4% false positives, so some of
	// the 60 absent probes answer true.
	sizeAdded := indexes(page(0), page(pageKeys))
	// The counting filter gets two repeats; it loses page keys 0-19, one
	// copy of the repeated page key 20 (still present), and removes an absent
	// key, which fails.
	countingAdded := append(indexes(0, page(50)), page(20), page(20))
	countingRemoved := append(indexes(page(0), page(20)), page(20), page(100))
	// 60 keys from an initial capacity of 4 fill layers of 4, 8, 16 and 32.
	scalableAdded := append(indexes(page(0), page(60)), page(0))
	// Three generations of page keys 0-29, 20-49 (20-29 again: not new, but
	// refreshed) and 50-69 with the special keys; the last rotation drops
	// the first generation, so keys 0-19 are gone and 20-29 stay.
	windowAdded := append(append(indexes(page(0), page(30)), indexes(page(20), page(50))...), append(indexes(page(50), page(70)), indexes(0, 9)...)...)

	v.Filters = []filterCase{
		{
			Name: "classic-estimates", Kind: "classic", Params: filterParams{Capacity: 1000, ErrorRate: 0.01},
			Added:  classicAdded,
			Probes: append(append(keysAt(indexes(0, page(10))), keysAt(indexes(page(100), page(110)))...), absent(0, 20)...),
		},
		{
			Name: "classic-size", Kind: "classic", Params: filterParams{Bits: 1024, Hashes: 5},
			Added:  sizeAdded,
			Probes: append(keysAt(indexes(page(0), page(20))), absent(0, 60)...),
		},
		{
			Name: "classic-one-bit", Kind: "classic", Params: filterParams{Bits: 1, Hashes: 1},
			Added:  []int{slices.Index(v.Keys, "")},
			Probes: []string{"", "anything", v.Keys[0]},
		},
		{
			Name: "counting-removals", Kind: "counting", Params: filterParams{Capacity: 200, ErrorRate: 0.01},
			Added: countingAdded, Removed: countingRemoved,
			Probes: append(append(keysAt(indexes(page(0), page(30))), keysAt(indexes(0, 5))...), absent(0, 10)...),
		},
		{
			Name: "counting-saturated", Kind: "counting", Params: filterParams{Bits: 64, Hashes: 4},
			Added: indexes(page(0), page(pageKeys)), Removed: indexes(page(0), page(100)),
			Probes: append(keysAt(indexes(page(90), page(pageKeys))), absent(0, 30)...),
		},
		{
			Name: "window-rotated", Kind: "window", Params: filterParams{CapacityPerGeneration: 32, ErrorRate: 0.01, Generations: 3},
			Added: windowAdded, Rotations: []int{30, 60, len(windowAdded)},
			Probes: append(append(keysAt(indexes(page(0), page(70))), keysAt(indexes(0, 9))...), absent(0, 20)...),
		},
		{
			Name: "scalable-small", Kind: "scalable", Params: filterParams{InitialCapacity: 4, ErrorRate: 0.01},
			Added:  scalableAdded,
			Probes: append(append(keysAt(indexes(page(0), page(60))), keysAt(indexes(0, 3))...), absent(0, 40)...),
		},
	}

	// Split-block filters: the bits of every key in 1, 7 and 1000 blocks
	// and in 2^32, the largest size, whose positions pass 2^32; and filters
	// of four sizes.
	for _, blocks := range []uint64{1, 7, 1000, MaxBlocks} {
		c := blockedLocationCase{Blocks: blocks}
		for _, key := range v.Keys {
			c.Positions = append(c.Positions, blockedLocations(key, blocks))
		}
		v.BlockedLocations = append(v.BlockedLocations, c)
	}
	v.Blocked = []filterCase{
		{
			Name: "blocked-estimates", Kind: "blocked", Params: filterParams{Capacity: 1000, ErrorRate: 0.01},
			Added:  classicAdded,
			Probes: append(append(keysAt(indexes(0, page(10))), keysAt(indexes(page(100), page(110)))...), absent(0, 20)...),
		},
		{
			Name: "blocked-size", Kind: "blocked", Params: filterParams{Blocks: 4},
			Added:  sizeAdded,
			Probes: append(keysAt(indexes(page(0), page(20))), absent(0, 60)...),
		},
		{
			Name: "blocked-one-block", Kind: "blocked", Params: filterParams{Blocks: 1},
			Added:  []int{slices.Index(v.Keys, ""), 0},
			Probes: []string{"", "anything", v.Keys[0], v.Keys[1]},
		},
		{
			Name: "blocked-capacity", Kind: "blocked", Params: filterParams{Capacity: 150, ErrorRate: 0.001},
			Added:  append(indexes(page(0), page(pageKeys)), indexes(0, len(specialKeys))...),
			Probes: append(keysAt(indexes(page(140), page(pageKeys))), absent(0, 40)...),
		},
	}
	for _, cases := range [][]filterCase{v.Filters, v.Blocked} {
		for i := range cases {
			c := &cases[i]
			f, err := c.run(v.Keys)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", c.Name, err)
			}
			if err := c.checkShape(f, v.Keys); err != nil {
				return nil, fmt.Errorf("%s: %v", c.Name, err)
			}
		}
	}
	return v, nil
}

// blockedLocations returns the eight bits that key sets in a split-block
// filter of the given number of blocks, computed as the format describes.
func blockedLocations(key string, blocks uint64) []uint64 {
	h := sumString(key, 0)
	block := (h >> 32) * blocks >> 32
	pos := make([]uint64, 8)
	for i := range pos {
		pos[i] = BlockBits*block + 32*uint64(i) + uint64(uint32(h)*salt[i]>>27)
	}
	return pos
}

// checkShape checks that a generated case shows what it was made to show, so
// that a change of the key lists cannot quietly make it pointless.
func (c *filterCase) checkShape(f set, keys []string) error {
	falsePositive := false
	for i, p := range c.Probes {
		falsePositive = falsePositive || c.Has[i] && strings.Contains(p, "/absent/")
	}
	switch c.Name {
	case "classic-size", "blocked-size":
		if !falsePositive {
			return fmt.Errorf("no false positive among the probes")
		}
	case "counting-removals":
		if r := c.RemoveResults; r[len(r)-1] || !r[len(r)-2] || !f.HasString(keys[c.Removed[len(r)-2]]) {
			return fmt.Errorf("removals do not show an absent key and a repeated key")
		}
	case "counting-saturated":
		cf := f.(*CountingFilter)
		saturated := 0
		for i := range cf.NumBits() {
			if cf.Counter(i) == CounterMax {
				saturated++
			}
		}
		if saturated == 0 || saturated == int(cf.NumBits()) {
			return fmt.Errorf("%d of %d counters saturated; want some", saturated, cf.NumBits())
		}
	case "window-rotated":
		dropped, refreshed := 0, 0
		for i := range 70 {
			switch {
			case i < 20 && !c.Has[i]:
				dropped++
			case i >= 20 && i < 30 && c.Has[i] && !c.AddResults[i+10]:
				refreshed++
			}
		}
		if dropped < 15 || refreshed != 10 {
			return fmt.Errorf("%d of 20 keys of the dropped generation absent, %d of 10 refreshed keys present and reported not new; want most, 10", dropped, refreshed)
		}
	case "scalable-small":
		if l := f.(*ScalableFilter).Layers(); l < 3 {
			return fmt.Errorf("%d layers; want at least 3", l)
		}
	}
	return nil
}

// scalarArray matches a JSON array of numbers or booleans spread over lines.
var scalarArray = regexp.MustCompile(`\[\n\s*(?:[-0-9.e+]+|true|false)(?:,\n\s*(?:[-0-9.e+]+|true|false))*\n\s*\]`)

// encodeVectors formats v with one line a key or probe, and arrays of
// numbers and booleans each on one line.
func encodeVectors(v *vectorFile) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return scalarArray.ReplaceAllFunc(buf.Bytes(), func(b []byte) []byte {
		fields := strings.Fields(string(b[1 : len(b)-1]))
		return []byte("[" + strings.Join(fields, " ") + "]")
	}), nil
}

func TestVectors(t *testing.T) {
	want, err := generateVectors()
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := encodeVectors(want)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(vectorsPath, wantJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", vectorsPath)
	}
	data, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", vectorsPath, err)
	}
	t.Run("locations", func(t *testing.T) { checkLocations(t, &v) })
	t.Run("blockedLocations", func(t *testing.T) { checkBlockedLocations(t, &v) })
	for _, c := range append(v.Filters, v.Blocked...) {
		t.Run(c.Name, func(t *testing.T) { checkFilterCase(t, c, v.Keys) })
		if c.Kind == "classic" {
			c.sync = true
			t.Run(c.Name+"/SyncFilter", func(t *testing.T) { checkFilterCase(t, c, v.Keys) })
		}
	}
	if !bytes.Equal(data, wantJSON) {
		t.Errorf("%s is not what the generator writes now; run UPDATE_GOLDEN=1 go test ./bloom -run TestVectors and review the diff", vectorsPath)
	}
}

func checkLocations(t *testing.T, v *vectorFile) {
	if len(v.Locations) == 0 {
		t.Fatal("no locations")
	}
	for _, c := range v.Locations {
		if len(c.Positions) != len(v.Keys) {
			t.Fatalf("m=%d k=%d: %d position arrays for %d keys", c.M, c.K, len(c.Positions), len(v.Keys))
		}
		var f *Filter
		if c.M <= 1<<24 {
			f = must(NewWithSize(c.M, c.K))
		}
		for i, key := range v.Keys {
			got := appendLocations(nil, sumString(key, 0), c.M, c.K)
			if ext := AppendLocations(nil, []byte(key), c.M, c.K, 0); !slicesEqual(ext, got) {
				t.Errorf("m=%d k=%d: AppendLocations(%.40q) differs from the hash scheme", c.M, c.K, key)
			}
			if f != nil && !slicesEqual(f.Locations([]byte(key)), got) {
				t.Errorf("m=%d k=%d: Filter.Locations(%.40q) differs from the hash scheme", c.M, c.K, key)
			}
			if !slicesEqual(got, c.Positions[i]) {
				t.Errorf("m=%d k=%d: Locations(%.40q): got %v; want %v", c.M, c.K, key, got, c.Positions[i])
			}
		}
	}
}

func checkBlockedLocations(t *testing.T, v *vectorFile) {
	if len(v.BlockedLocations) == 0 {
		t.Fatal("no blockedLocations")
	}
	for _, c := range v.BlockedLocations {
		if len(c.Positions) != len(v.Keys) {
			t.Fatalf("blocks=%d: %d position arrays for %d keys", c.Blocks, len(c.Positions), len(v.Keys))
		}
		var f *BlockedFilter
		if c.Blocks <= 1<<16 {
			f = must(NewBlockedWithSize(c.Blocks))
		}
		for i, key := range v.Keys {
			if got := blockedLocations(key, c.Blocks); !slicesEqual(got, c.Positions[i]) {
				t.Errorf("blocks=%d: locations of %.40q: got %v; want %v", c.Blocks, key, got, c.Positions[i])
			}
			if f == nil {
				continue
			}
			// The filter sets exactly those bits.
			f.Clear()
			f.AddString(key)
			var set []uint64
			for j, w := range f.words() {
				for ; w != 0; w &= w - 1 {
					set = append(set, 64*uint64(j)+uint64(bits.TrailingZeros64(w)))
				}
			}
			if !slicesEqual(set, c.Positions[i]) {
				t.Errorf("blocks=%d: AddString(%.40q) set bits %v; want %v", c.Blocks, key, set, c.Positions[i])
			}
		}
	}
}

func checkFilterCase(t *testing.T, want filterCase, keys []string) {
	got := want
	got.AddResults, got.RemoveResults, got.Has = nil, nil, nil
	f, err := got.run(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range want.Added {
		if got.AddResults[i] != want.AddResults[i] {
			t.Errorf("Add(%.40q), #%d: got %v; want %v", keys[key], i, got.AddResults[i], want.AddResults[i])
		}
	}
	for i, key := range want.Removed {
		if got.RemoveResults[i] != want.RemoveResults[i] {
			t.Errorf("Remove(%.40q), #%d: got %v; want %v", keys[key], i, got.RemoveResults[i], want.RemoveResults[i])
		}
	}
	checkHas(t, "", f, want)
	if got.Bits != want.Bits || got.Hashes != want.Hashes || got.Count != want.Count || got.SetBits != want.SetBits {
		t.Errorf("bits, hashes, count, setBits: got %d, %d, %d, %d; want %d, %d, %d, %d",
			got.Bits, got.Hashes, got.Count, got.SetBits, want.Bits, want.Hashes, want.Count, want.SetBits)
	}
	b, err := base64.StdEncoding.DecodeString(want.Base64)
	if err != nil {
		t.Fatalf("base64: %v", err)
	}
	if got.Base64 != want.Base64 {
		t.Errorf("MarshalBinary: got %s; want %s", got.Base64, want.Base64)
	}

	// The encoding decodes to a filter that answers and encodes the same.
	g := newOfKind(kindOf(f))
	if want.sync {
		g = new(SyncFilter)
		d, err := DecodeSync(bytes.NewReader(b), DefaultMaxBits)
		if err != nil {
			t.Fatalf("DecodeSync: %v", err)
		}
		checkHas(t, "DecodeSync: ", d, want)
		if re := must(d.MarshalBinary()); !bytes.Equal(re, b) {
			t.Errorf("DecodeSync: re-encoding differs from the base64")
		}
	}
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	checkHas(t, "decoded: ", g, want)
	if g.NumBits() != want.Bits || g.Count() != want.Count || g.SetBits() != want.SetBits {
		t.Errorf("decoded: bits, count, setBits: got %d, %d, %d; want %d, %d, %d", g.NumBits(), g.Count(), g.SetBits(), want.Bits, want.Count, want.SetBits)
	}
	if re := must(g.MarshalBinary()); !bytes.Equal(re, b) {
		t.Errorf("decoded: re-encoding differs from the base64")
	}
}

func checkHas(t *testing.T, prefix string, f set, want filterCase) {
	t.Helper()
	if len(want.Has) != len(want.Probes) {
		t.Fatalf("%d answers for %d probes", len(want.Has), len(want.Probes))
	}
	for i, p := range want.Probes {
		if got := f.HasString(p); got != want.Has[i] {
			t.Errorf("%sHasString(%.40q): got %v; want %v", prefix, p, got, want.Has[i])
		}
		if got := f.Has([]byte(p)); got != want.Has[i] {
			t.Errorf("%sHas(%.40q): got %v; want %v", prefix, p, got, want.Has[i])
		}
	}
}
