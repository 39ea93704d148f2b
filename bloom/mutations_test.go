package bloom_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/budget"
	"github.com/edgebloom/edgebloom/snapshot"
)

// Mutations of valid encodings, each with the code Go refuses it with (or
// "no error"), for the npm module to answer alike: js/test/mutations.test.js
// runs TestMutations with EDGEBLOOM_MUTATIONS naming a file, which it writes,
// and checks every input against the module. The inputs come from the seed
// EDGEBLOOM_MUTATION_SEED (mutationSeed without it), which the file and the
// log name, so a difference found is found again.
const (
	mutationCount = 20_000
	mutationSeed  = 30
)

// mutationSeedFromEnv returns EDGEBLOOM_MUTATION_SEED, or mutationSeed.
func mutationSeedFromEnv(t testing.TB) uint64 {
	v := os.Getenv("EDGEBLOOM_MUTATION_SEED")
	if v == "" {
		return mutationSeed
	}
	seed, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("EDGEBLOOM_MUTATION_SEED=%q: %v", v, err)
	}
	return seed
}

// loadAny loads data as the npm module's fromBytes does: a sharded container
// by its magic, else a filter of the kind its header names.
func loadAny(data []byte, maxBits uint64) error {
	if len(data) >= 4 && string(data[:4]) == snapshot.Magic {
		_, err := snapshot.LoadSharded(data, maxBits)
		return err
	}
	return decodeAny(data, maxBits)
}

// mutate returns an edit of one of the valid inputs: bytes flipped, set,
// cut, added or moved, header fields of the outer record or of a record
// inside it set to values near their limits, and often every checksum made
// right again, so that the checks behind them are reached.
func mutate(rng *rand.Rand, valid [][]byte) (data []byte, how string) {
	src := rng.IntN(len(valid))
	b := bytes.Clone(valid[src])
	how = fmt.Sprintf("input %d", src)
	// Record starts: the outer record, and the records inside it (layers,
	// generations, a container's router and shards).
	starts := recordStarts(b)
	for range 1 + rng.IntN(3) {
		switch op := rng.IntN(9); {
		case op == 0 && len(b) > 0: // flip a bit
			i := rng.IntN(len(b))
			b[i] ^= 1 << rng.IntN(8)
			how += fmt.Sprintf(", bit flipped at %d", i)
		case op == 1 && len(b) > 0: // set a byte
			i := rng.IntN(len(b))
			b[i] = byte(rng.IntN(256))
			how += fmt.Sprintf(", byte %d set", i)
		case op == 2: // cut
			n := rng.IntN(len(b) + 1)
			b = b[:n]
			how += fmt.Sprintf(", cut to %d bytes", n)
		case op == 3: // add bytes
			n := 1 + rng.IntN(16)
			for range n {
				b = append(b, byte(rng.IntN(256)))
			}
			how += fmt.Sprintf(", %d bytes added", n)
		case op == 4 && len(b) > 8: // remove a run
			i := rng.IntN(len(b) - 8)
			n := 1 + rng.IntN(8)
			b = append(b[:i], b[i+n:]...)
			how += fmt.Sprintf(", %d bytes removed at %d", n, i)
		default: // a header field of a record set near a limit
			at := starts[rng.IntN(len(starts))]
			off, size := headerField(rng)
			if at+off+size > len(b) {
				continue
			}
			v := interesting(rng, b[at+off:at+off+size])
			putField(b[at+off:], size, v)
			how += fmt.Sprintf(", field at %d+%d set to %d", at, off, v)
		}
	}
	if rng.IntN(2) == 0 {
		b = resealEvery(b)
		how += ", resealed"
	}
	return b, how
}

// recordStarts returns the offsets of the records in b: 0, and the records
// inside a scalable filter or window (from 64, each 72 bytes plus its
// payload) or a sharded container (after its header).
func recordStarts(b []byte) []int {
	starts := []int{0}
	off := 64
	if len(b) >= 24 && string(b[:4]) == snapshot.Magic {
		s := le.Uint32(b[8:])
		if s > 1<<10 {
			return starts
		}
		off = 24 + 8*int(s)
	} else if len(b) < 64 || (b[offKind] != 3 && b[offKind] != 4) {
		return starts
	}
	for off+64 <= len(b) {
		starts = append(starts, off)
		n := le.Uint64(b[off+offPayload:])
		if n > uint64(len(b)) {
			break
		}
		off += 72 + int(n)
	}
	return starts
}

// resealEvery makes every checksum in b right, inner records first.
func resealEvery(b []byte) []byte {
	starts := recordStarts(b)
	for i := len(starts) - 1; i >= 0; i-- {
		at := starts[i]
		if at+64 > len(b) {
			continue
		}
		n := 72 + le.Uint64(b[at+offPayload:])
		if i == 0 && at == 0 && len(b) >= 4 && string(b[:4]) == snapshot.Magic {
			continue // the container has no checksum of its own
		}
		if n <= uint64(len(b)-at) {
			reseal(b, at, int(n))
		}
	}
	return b
}

// headerField picks a field of a filter header: its offset and size.
func headerField(rng *rand.Rand) (off, size int) {
	fields := [][2]int{{offVersion, 1}, {offKind, 1}, {offHash, 1}, {offFlags, 1}, {offSeed, 8}, {offM, 8}, {offK, 4},
		{offParts, 4}, {offCount, 8}, {40, 8}, {offRate, 8}, {offPayload, 8}}
	f := fields[rng.IntN(len(fields))]
	return f[0], f[1]
}

// interesting returns a value near a limit, or near the field's value.
func interesting(rng *rand.Rand, field []byte) uint64 {
	var cur uint64
	for i := len(field) - 1; i >= 0; i-- {
		cur = cur<<8 | uint64(field[i])
	}
	switch rng.IntN(8) {
	case 0:
		return 0
	case 1:
		return 1 + uint64(rng.IntN(8))
	case 2:
		return math.MaxUint64 >> rng.IntN(64)
	case 3:
		return 1 << rng.IntN(64)
	case 4:
		return math.Float64bits([]float64{0, 0.5, 1, math.NaN(), math.Inf(1), -0.01, 1e-300}[rng.IntN(7)])
	}
	return cur + uint64(rng.IntN(129)) - 64
}

func putField(b []byte, size int, v uint64) {
	for i := range size {
		b[i] = byte(v >> (8 * i))
	}
}

// mutationCases returns n mutations of valid, each with the code the npm
// module's engine must give it: Go's, with the bound of the case and the
// one a fresh engine's memory budget makes (loadBudgeted). Most cases are
// bounded by 2^20 bits, an eighth by a few hundred, and an eighth by the
// npm module's default maxBits, where the budget is the bound that counts.
func mutationCases(n int, seed uint64, valid [][]byte) []malformedCase {
	rng := rand.New(rand.NewPCG(seed, 0))
	cases := make([]malformedCase, n)
	for i := range cases {
		b, how := mutate(rng, valid)
		bound := uint64(1 << 20)
		switch rng.IntN(8) {
		case 0:
			bound = uint64(1 + rng.IntN(2000))
		case 1:
			bound = jsMaxBits
		}
		cases[i] = mutationCase(i, how, b, bound)
	}
	return cases
}

func mutationCase(i int, how string, b []byte, bound uint64) malformedCase {
	c := malformedCase{
		Name: fmt.Sprintf("mutation %d", i), About: how, Reader: "any", MaxBits: bound, Room: engineRoom,
		Code: codeOf(loadBudgeted(b, bound, engineRoom)), Base64: base64.StdEncoding.EncodeToString(b),
	}
	if native := codeOf(loadAny(b, bound)); native != c.Code {
		c.Native = native
	}
	return c
}

// validInputs returns a valid encoding of every kind and a container.
func validInputs() [][]byte {
	classic, counting, scalable, window, blocked := goodFilters()
	return [][]byte{classic, counting, scalable, window, blocked, goodContainer()}
}

// TestMutations refuses every mutation with a code (never an unclassified
// error) and checks the Go readers agree: UnmarshalBinary and snapshot.Load
// give the code decodeAny gives. With EDGEBLOOM_MUTATIONS set, it writes the
// cases there for js/test/mutations.test.js.
func TestMutations(t *testing.T) {
	n := mutationCount
	if testing.Short() {
		n = 2000
	}
	seed := mutationSeedFromEnv(t)
	cases := mutationCases(n, seed, validInputs())
	codes := map[string]int{}
	for _, c := range cases {
		codes[c.Code]++
		b, _ := base64.StdEncoding.DecodeString(c.Base64)
		if strings.HasPrefix(c.Code, "unclassified") {
			t.Errorf("%s (%s): %s", c.Name, c.About, c.Code)
		}
		// Under its caller's bound alone, Go refuses with the same code or
		// another: the budget only adds ERR_TOO_LARGE.
		if c.Native != "" && c.Code != "ERR_TOO_LARGE" {
			t.Errorf("%s (%s): %s under the budget, %s without", c.Name, c.About, c.Code, c.Native)
		}
		// snapshot.Load reads a classic filter, or a container, as loadAny.
		if c.MaxBits == jsMaxBits || len(b) > offKind && b[offKind] != 1 && string(b[:4]) != snapshot.Magic {
			continue
		}
		if _, err := snapshot.Load(b, c.MaxBits); codeOf(err) != c.Code {
			t.Errorf("%s (%s): snapshot.Load: %s (%v); loadAny: %s", c.Name, c.About, codeOf(err), err, c.Code)
		}
	}
	t.Logf("%d mutations of seed %d: %v", len(cases), seed, codes)
	if path := os.Getenv("EDGEBLOOM_MUTATIONS"); path != "" {
		data, err := json.Marshal(malformedFile{Note: "TestMutations, seed " + fmt.Sprint(seed), Cases: cases})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMutationsLarge makes mutations of filters of every kind of 27 and 29
// MiB, around the largest a fresh engine of the npm module loads with its
// default budget (28 MiB: the input is copied in and becomes a filter), and
// checks that the budget only adds ERR_TOO_LARGE to the codes Go gives.
// With EDGEBLOOM_MUTATIONS_LARGE naming a directory it writes
// EDGEBLOOM_MUTATIONS_LARGE_N (100) of them there, one file each and an
// index.json of the cases without their bytes, for tools/refusal-codes.mjs.
// (Mutations of small filters reach the budget with their headers only.)
func TestMutationsLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("filters of 27 and 29 MiB")
	}
	dir := os.Getenv("EDGEBLOOM_MUTATIONS_LARGE")
	n := 100
	if dir == "" {
		dir, n = t.TempDir(), 12
	}
	if v := os.Getenv("EDGEBLOOM_MUTATIONS_LARGE_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	var valid [][]byte
	for _, size := range []uint64{27 << 20, 29 << 20} {
		valid = append(valid, largeFilters(t, size)...)
	}
	seed := mutationSeedFromEnv(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	var index []malformedCase
	for i := range n {
		b, how := mutate(rng, valid)
		bound := uint64(jsMaxBits)
		c := mutationCase(i, how, b, bound)
		if strings.HasPrefix(c.Code, "unclassified") || c.Native != "" && c.Code != "ERR_TOO_LARGE" {
			t.Errorf("%s (%s): %s under the budget, %s without", c.Name, c.About, c.Code, c.Native)
		}
		c.Base64 = fmt.Sprintf("%d.bin", i) // the bytes are in this file
		if err := os.WriteFile(dir+"/"+c.Base64, b, 0o644); err != nil {
			t.Fatal(err)
		}
		index = append(index, c)
	}
	data, err := json.Marshal(malformedFile{Note: "TestMutationsLarge, seed " + fmt.Sprint(seed), Cases: index})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/index.json", data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// largeFilters returns a filter of every kind of about size bytes, with
// keys in it.
func largeFilters(t *testing.T, size uint64) [][]byte {
	c, err1 := bloom.NewWithSize(8*size, 7)
	n, err2 := bloom.NewCountingWithSize(2*size, 7)
	b, err3 := bloom.NewBlockedWithSize(size / 32)
	// A scalable filter's first layer and a window's three generations:
	// their capacity scaled to the size from a small one's.
	s0, _ := bloom.NewScalable(1000, 0.01)
	s, err4 := bloom.NewScalable(1000*size/s0.EncodedSize(), 0.01)
	w0, _ := bloom.NewWindow(1000, 0.01, 3)
	w, err5 := bloom.NewWindow(1000*size/w0.EncodedSize(), 0.01, 3)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var out [][]byte
	for _, f := range []interface {
		AddString(string) bool
		MarshalBinary() ([]byte, error)
	}{c, n, s, w, b} {
		for i := range 40 {
			f.AddString(fmt.Sprintf("https://example.com/%d", i))
		}
		out = append(out, mustMarshal(f))
	}
	return out
}

// asNPM loads data in the order the npm module does (js/filter.js load) in
// an engine with room bytes for loads: the header checked by InspectKind
// for the kind the header names (classic for one the format does not have)
// with the bound loadBudgeted applies, a single record cut short refused,
// the record decoded as long as its header says and no longer, then any
// bytes after it refused. A sharded container goes to snapshot.LoadSharded,
// which js/sharded.js follows step by step.
func asNPM(data []byte, maxBits, room uint64) error {
	if len(data) >= 4 && string(data[:4]) == snapshot.Magic {
		return loadBudgeted(data, maxBits, room)
	}
	if len(data) < bloom.HeaderSize {
		return io.ErrUnexpectedEOF
	}
	kind := data[offKind]
	if kind < 1 || kind > 5 {
		kind = 1
	}
	bound := min(maxBits, budget.Bits(kind, budget.LoadRecord(room)))
	info, err := bloom.InspectKind(data[:bloom.HeaderSize], kind, bound)
	if err != nil {
		return err
	}
	// A classic, counting or split-block record cut short: refused before
	// it is copied, its checksum never reached.
	if uint64(len(data)) < info.Size && info.Kind != "scalable" && info.Kind != "window" {
		return io.ErrUnexpectedEOF
	}
	n := min(uint64(len(data)), info.Size)
	if err := decodeAny(data[:n], bound); err != nil {
		return err
	}
	if uint64(len(data)) > info.Size {
		return fmt.Errorf("%w: trailing bytes", bloom.ErrCorrupt)
	}
	return nil
}

// FuzzRefusalCodes checks that the npm module's order of checks (asNPM)
// refuses every input with the code Go's decoders give it, reading it in
// order (loadBudgeted), and that every refusal has a code; bound picks the
// caller's bound: 2^20 bits, 1000, or the npm module's default, under which
// a fresh engine's memory budget is the bound that counts. The npm module
// runs this order in its engine; js/test/mutations.test.js checks the
// module itself against Go on TestMutations' inputs.
func FuzzRefusalCodes(f *testing.F) {
	for _, b := range validInputs() {
		for bound := range uint8(3) {
			f.Add(b, bound)
		}
	}
	// The malformed corpus (what earlier runs found, written down) and
	// mutations of the fixed seed.
	for _, c := range append(generateMalformed().Cases, mutationCases(200, mutationSeed, validInputs())...) {
		b, _ := base64.StdEncoding.DecodeString(c.Base64)
		bound := uint8(1)
		switch c.MaxBits {
		case 1 << 20:
			bound = 0
		case jsMaxBits:
			bound = 2
		}
		f.Add(b, bound)
	}
	f.Fuzz(func(t *testing.T, data []byte, bound uint8) {
		maxBits := []uint64{1 << 20, 1000, jsMaxBits}[bound%3]
		want := codeOf(loadBudgeted(data, maxBits, engineRoom))
		if strings.HasPrefix(want, "unclassified") {
			t.Fatalf("a refusal without a code: %s", want)
		}
		if got := codeOf(asNPM(data, maxBits, engineRoom)); got != want {
			t.Fatalf("checked as the npm module checks: %s; read in order: %s", got, want)
		}
	})
}
