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
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"

	"github.com/edgebloom/edgebloom/snapshot"
)

// Mutations of valid encodings, each with the code Go refuses it with (or
// "no error"), for the npm module to answer alike: js/test/mutations.test.js
// runs TestMutations with EDGEBLOOM_MUTATIONS naming a file, which it writes,
// and checks every input against the module. The inputs come from a fixed
// seed, so a difference found is found again.
const (
	mutationCount = 20_000
	mutationSeed  = 30
)

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

// mutationCases returns n mutations with Go's codes.
func mutationCases(n int) []malformedCase {
	classic, counting, scalable, window, blocked := goodFilters()
	valid := [][]byte{classic, counting, scalable, window, blocked, goodContainer()}
	rng := rand.New(rand.NewPCG(mutationSeed, 0))
	cases := make([]malformedCase, n)
	for i := range cases {
		b, how := mutate(rng, valid)
		bound := uint64(1 << 20)
		if rng.IntN(8) == 0 {
			bound = uint64(1 + rng.IntN(2000))
		}
		cases[i] = malformedCase{
			Name: fmt.Sprintf("mutation %d", i), About: how, Reader: "any", MaxBits: bound,
			Code: codeOf(loadAny(b, bound)), Base64: base64.StdEncoding.EncodeToString(b),
		}
	}
	return cases
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
	cases := mutationCases(n)
	codes := map[string]int{}
	for _, c := range cases {
		codes[c.Code]++
		b, _ := base64.StdEncoding.DecodeString(c.Base64)
		if strings.HasPrefix(c.Code, "unclassified") {
			t.Errorf("%s (%s): %s", c.Name, c.About, c.Code)
		}
		// snapshot.Load reads a classic filter, or a container, as loadAny.
		if len(b) > offKind && b[offKind] != 1 && string(b[:4]) != snapshot.Magic {
			continue
		}
		if _, err := snapshot.Load(b, c.MaxBits); codeOf(err) != c.Code {
			t.Errorf("%s (%s): snapshot.Load: %s (%v); loadAny: %s", c.Name, c.About, codeOf(err), err, c.Code)
		}
	}
	t.Logf("%d mutations: %v", len(cases), codes)
	if path := os.Getenv("EDGEBLOOM_MUTATIONS"); path != "" {
		data, err := json.Marshal(malformedFile{Note: "TestMutations, seed " + fmt.Sprint(mutationSeed), Cases: cases})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// asNPM loads data in the order the npm module does (js/filter.js load):
// the header checked by InspectKind for the kind the header names (classic
// for one the format does not have), a single record cut short refused,
// the record decoded as long as its header says and no longer, then any
// bytes after it refused. A sharded
// container goes to snapshot.LoadSharded, which js/sharded.js follows
// step by step.
func asNPM(data []byte, maxBits uint64) error {
	if len(data) >= 4 && string(data[:4]) == snapshot.Magic {
		_, err := snapshot.LoadSharded(data, maxBits)
		return err
	}
	if len(data) < bloom.HeaderSize {
		return io.ErrUnexpectedEOF
	}
	kind := data[offKind]
	if kind < 1 || kind > 5 {
		kind = 1
	}
	info, err := bloom.InspectKind(data[:bloom.HeaderSize], kind, maxBits)
	if err != nil {
		return err
	}
	// A classic, counting or split-block record cut short: refused before
	// it is copied, its checksum never reached.
	if uint64(len(data)) < info.Size && info.Kind != "scalable" && info.Kind != "window" {
		return io.ErrUnexpectedEOF
	}
	n := min(uint64(len(data)), info.Size)
	if err := decodeAny(data[:n], maxBits); err != nil {
		return err
	}
	if uint64(len(data)) > info.Size {
		return fmt.Errorf("%w: trailing bytes", bloom.ErrCorrupt)
	}
	return nil
}

// FuzzRefusalCodes checks that the npm module's order of checks (asNPM)
// refuses every input with the code Go's decoders give it, reading it in
// order (loadAny), and that every refusal has a code. The npm module runs
// this order in its engine; js/test/mutations.test.js checks the module
// itself against Go on TestMutations' inputs.
func FuzzRefusalCodes(f *testing.F) {
	classic, counting, scalable, window, blocked := goodFilters()
	for _, b := range [][]byte{classic, counting, scalable, window, blocked, goodContainer()} {
		f.Add(b, false)
	}
	for _, c := range mutationCases(200) {
		b, _ := base64.StdEncoding.DecodeString(c.Base64)
		f.Add(b, c.MaxBits < 1<<20)
	}
	f.Fuzz(func(t *testing.T, data []byte, small bool) {
		bound := uint64(1 << 20)
		if small {
			bound = 1000
		}
		want := codeOf(loadAny(data, bound))
		if strings.HasPrefix(want, "unclassified") {
			t.Fatalf("a refusal without a code: %s", want)
		}
		if got := codeOf(asNPM(data, bound)); got != want {
			t.Fatalf("checked as the npm module checks: %s; read in order: %s", got, want)
		}
	})
}
