package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// service plays the edge service's shards: each add is logged as the
// positions it set, and a delta is made from the log since a position.
type service struct {
	shards []*bloom.Filter
	logs   [][][]uint64 // per shard, one entry a log row
	counts [][]uint64
	router *bloom.Filter
}

func newService(t *testing.T, s int) *service {
	t.Helper()
	sv := &service{router: Router(s), logs: make([][][]uint64, s), counts: make([][]uint64, s)}
	for range s {
		f, err := bloom.New(1000, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		sv.shards = append(sv.shards, f)
	}
	return sv
}

func (sv *service) add(keys ...string) {
	for _, k := range keys {
		sh := 0
		if len(sv.shards) > 1 {
			sh = Route(sv.router, k)
		}
		if pos, fresh := sv.shards[sh].AddChanges([]byte(k), nil); fresh {
			sv.logs[sh] = append(sv.logs[sh], pos)
			sv.counts[sh] = append(sv.counts[sh], sv.shards[sh].Count())
		}
	}
}

func (sv *service) cursor() Cursor {
	c := Cursor{Generation: 7}
	for i := range sv.shards {
		c.Shards = append(c.Shards, ShardPosition{Epoch: uint32(100 + i), Position: uint64(len(sv.logs[i]))})
	}
	return c
}

func (sv *service) delta(since Cursor, whole ...int) []byte {
	var recs []DeltaRecord
	for i, f := range sv.shards {
		from, to := since.Shards[i].Position, uint64(len(sv.logs[i]))
		if slices.Contains(whole, i) {
			recs = append(recs, DeltaRecord{Shard: uint32(i), Epoch: uint32(100 + i), To: to, Count: f.Count(), Filter: f})
			continue
		}
		if from == to {
			continue
		}
		var pos []uint64
		for _, row := range sv.logs[i][from:] {
			pos = append(pos, row...)
		}
		recs = append(recs, DeltaRecord{Shard: uint32(i), Epoch: uint32(100 + i), From: from, To: to, Count: f.Count(), Positions: pos})
	}
	f := sv.shards[0]
	return EncodeDelta(&Delta{Generation: 7, Seed: f.Seed(), M: f.NumBits(), K: f.NumHashes(), Shards: uint32(len(sv.shards)), Records: recs})
}

func (sv *service) snapshot(t *testing.T) []byte {
	t.Helper()
	if len(sv.shards) == 1 {
		return encode(t, sv.shards[0])
	}
	return encode(t, &Sharded{Router: sv.router, Shards: sv.shards})
}

func encode(t *testing.T, s Set) []byte {
	t.Helper()
	b, err := s.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keys(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("https://example.org/%d", i))
	}
	return out
}

// A copy loaded from a snapshot and kept up with deltas has the service's
// bytes after every sync, counts included, for one shard and for several.
func TestDeltaFollowsService(t *testing.T) {
	for _, s := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d shards", s), func(t *testing.T) {
			sv := newService(t, s)
			sv.add(keys(0, 50)...)
			cp, err := Load(sv.snapshot(t), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			cur := sv.cursor()
			for round := range 5 {
				sv.add(keys(50+100*round, 150+100*round)...)
				sv.add(keys(0, 10)...) // present already: nothing logged
				if cur, err = ApplyDelta(cp, cur, sv.delta(cur)); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if !bytes.Equal(encode(t, cp), sv.snapshot(t)) {
					t.Fatalf("round %d: the copy's bytes differ from the service's", round)
				}
				if got, want := cur.Text(), sv.cursor().Text(); got != want {
					t.Fatalf("round %d: cursor %s; want %s", round, got, want)
				}
			}
			// Nothing new: a delta of no records, 52 bytes, changes nothing.
			d := sv.delta(cur)
			if len(d) != 52 {
				t.Errorf("an empty delta is %d bytes; want 52", len(d))
			}
			if _, err := ApplyDelta(cp, cur, d); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDeltaRefusals(t *testing.T) {
	sv := newService(t, 2)
	sv.add(keys(0, 20)...)
	snap := sv.snapshot(t)
	cur := sv.cursor()
	sv.add(keys(20, 40)...)
	good := sv.delta(cur)

	other := newService(t, 2)
	other.shards[0], _ = bloom.New(2000, 0.01)
	otherM := func() []byte { o := *sv; o.shards = other.shards; return o.delta(cur) }()
	gen := cur
	gen.Generation = 8
	ahead := Cursor{Generation: 7, Shards: []ShardPosition{{100, cur.Shards[0].Position + 1}, cur.Shards[1]}}
	epoch := Cursor{Generation: 7, Shards: []ShardPosition{{99, cur.Shards[0].Position}, {101, cur.Shards[1].Position}}}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1

	cases := []struct {
		name   string
		cursor Cursor
		data   []byte
		want   error
	}{
		{"another generation", gen, good, ErrDeltaMismatch},
		{"a gap: the copy is elsewhere in the log", ahead, good, ErrDeltaMismatch},
		{"another epoch of a shard's storage", epoch, good, ErrDeltaMismatch},
		{"another filter's shards", cur, otherM, ErrDeltaMismatch},
		{"a flipped bit", cur, flipped, bloom.ErrChecksum},
		{"cut short", cur, good[:len(good)-9], io.ErrUnexpectedEOF},
		{"not a delta", cur, snap, bloom.ErrNotFilter},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp, _ := Load(snap, 1<<20)
			_, err := ApplyDelta(cp, c.cursor, c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("ApplyDelta: got %v; want %v", err, c.want)
			}
			if !bytes.Equal(encode(t, cp), snap) {
				t.Fatal("a refused delta changed the copy")
			}
		})
	}
	// A plain filter is a copy of one shard only.
	f, _ := bloom.New(1000, 0.01)
	if _, err := ApplyDelta(f, Cursor{Generation: 7, Shards: []ShardPosition{{100, 0}}}, good); !errors.Is(err, ErrDeltaMismatch) {
		t.Fatalf("a delta of 2 shards on a plain filter: got %v", err)
	}
}

func TestCursorText(t *testing.T) {
	c := Cursor{Generation: 1764082800123, Shards: []ShardPosition{{1, 0}, {1<<32 - 1, 1 << 40}}}
	got, err := ParseCursor(c.Text())
	if err != nil || got.Generation != c.Generation || len(got.Shards) != 2 || got.Shards[1] != c.Shards[1] {
		t.Fatalf("ParseCursor(Text()) = %v, %v; want %v", got, err, c)
	}
	// One spelling: the text of a 5-byte cursor ends in a character of
	// which 2 bits are unused; set, it is not a cursor.
	short := Cursor{Generation: 1, Shards: []ShardPosition{{1, 1}}}.Text()
	if _, err := ParseCursor(short); err != nil || len(short) != 7 {
		t.Fatalf("ParseCursor(%q): %v", short, err)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	trailing := short[:6] + string(alphabet[strings.IndexByte(alphabet, short[6])|1])
	for _, bad := range []string{"", "!!", "AQ", c.Text() + "A", "AQH_____D38", trailing} {
		if _, err := ParseCursor(bad); err == nil {
			t.Errorf("ParseCursor(%q): no error", bad)
		}
	}
}

// FuzzDecodeDelta: no input makes DecodeDelta panic or allocate past its
// input, and what it accepts encodes to a delta that decodes the same.
func FuzzDecodeDelta(f *testing.F) {
	sv := newService(&testing.T{}, 2)
	cur := sv.cursor()
	sv.add(keys(0, 30)...)
	f.Add(sv.delta(cur))
	f.Add(sv.delta(cur, 1))
	d, _ := DecodeDelta(sv.delta(cur))
	d.Version = 1
	f.Add(EncodeDelta(d))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeDelta(data)
		if err != nil {
			return
		}
		again, err := DecodeDelta(EncodeDelta(d))
		if err != nil {
			t.Fatalf("a re-encoded delta does not decode: %v", err)
		}
		for i := range d.Records {
			a, b := &d.Records[i], &again.Records[i]
			if (a.Filter == nil) != (b.Filter == nil) || a.Filter != nil && !a.Filter.Equal(b.Filter) {
				t.Fatalf("record %d: the re-encoded shard differs", i)
			}
			a.Filter, b.Filter = nil, nil
		}
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("re-encoded delta differs")
		}
	})
}

// A version 1 delta (LEB128 gaps) is still read, and gives what the same
// delta in version 2 gives.
func TestDeltaVersion1(t *testing.T) {
	sv := newService(t, 2)
	sv.add(keys(0, 20)...)
	snap, cur := sv.snapshot(t), sv.cursor()
	sv.add(keys(20, 60)...)
	d, err := DecodeDelta(sv.delta(cur))
	if err != nil {
		t.Fatal(err)
	}
	d.Version = 1
	v1 := EncodeDelta(d)
	if v1[4] != 1 {
		t.Fatalf("version byte %d; want 1", v1[4])
	}
	cp, _ := Load(snap, 1<<20)
	if _, err := ApplyDelta(cp, cur, v1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, cp), sv.snapshot(t)) {
		t.Fatal("the copy after a version 1 delta is not the service's")
	}
}

// A record that carries its shard whole replaces the copy's shard, even one
// of another epoch or with bits the service's shard does not have (its
// storage made anew), while the other shards follow by their positions.
func TestDeltaWholeShard(t *testing.T) {
	sv := newService(t, 3)
	sv.add(keys(0, 30)...)
	cp, _ := Load(sv.snapshot(t), 1<<20)
	cur := sv.cursor()
	cp.(*Sharded).Shards[1].AddString("only in the copy")
	cur.Shards[1].Epoch = 55
	sv.add(keys(30, 90)...)
	next, err := ApplyDelta(cp, cur, sv.delta(cur, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, cp), sv.snapshot(t)) || next.Text() != sv.cursor().Text() {
		t.Fatal("the copy after a whole-shard record is not the service's")
	}
	// A shard record of other parameters is malformed.
	other, _ := bloom.New(2000, 0.01)
	o := *sv
	o.shards = slices.Clone(sv.shards)
	o.shards[1] = other
	if _, err := DecodeDelta(o.delta(cur, 1)); !errors.Is(err, bloom.ErrCorrupt) {
		t.Fatalf("a shard of another m: %v; want ErrCorrupt", err)
	}
}

// Rice-coded gaps of random positions, as a Bloom filter sets them, take
// at most 1.05 times their entropy (log2 of the ways to choose n of m
// bits) at the densities of a delta, 0.01 % to 30 % of the bits, and
// decode to the same positions.
func TestRiceSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m = 1 << 22
	for _, density := range []float64{0.0001, 0.001, 0.01, 0.05, 0.1, 0.3} {
		set := map[uint64]bool{}
		for len(set) < int(density*m) {
			set[rng.Uint64N(m)] = true
		}
		pos := make([]uint64, 0, len(set))
		for p := range set {
			pos = append(pos, p)
		}
		slices.Sort(pos)
		body := appendRice(nil, pos)
		n := float64(len(pos))
		lg, _ := math.Lgamma(m + 1)
		ln, _ := math.Lgamma(n + 1)
		lr, _ := math.Lgamma(m - n + 1)
		entropy := (lg - ln - lr) / math.Ln2 / 8
		if ratio := float64(len(body)) / entropy; ratio > 1.05 {
			t.Errorf("density %g: %d bytes, %.2f times the entropy", density, len(body), ratio)
		}
		got := make([]uint64, len(pos))
		if !decodeRice(body[2:], uint(body[1]), m, got) || !slices.Equal(got, pos) {
			t.Fatalf("density %g: the positions do not decode back", density)
		}
		if decodeRice(body[2:len(body)-1], uint(body[1]), m, got) {
			t.Fatalf("density %g: a stream cut short decodes", density)
		}
	}
}

// deltaGolden is testdata/delta.json: a snapshot, its cursor, a delta from
// it, and what the copy and its cursor are after; js/test/delta.test.js
// applies the same delta with the npm module.
const deltaGolden = "testdata/delta.json"

type goldenDelta struct {
	About    string `json:"about"`
	Snapshot []byte `json:"snapshot"`
	Cursor   string `json:"cursor"`
	Delta    []byte `json:"delta"`
	After    []byte `json:"after"`
	Next     string `json:"next"`
}

func makeGoldenDelta(t *testing.T) goldenDelta {
	sv := newService(t, 3)
	sv.add(keys(0, 40)...)
	g := goldenDelta{
		About:    "Written by snapshot's TestDeltaGolden (UPDATE_GOLDEN=1 regenerates it); read by js/test/delta.test.js. docs/format.md, \"Deltas\".",
		Snapshot: sv.snapshot(t), Cursor: sv.cursor().Text(),
	}
	cur := sv.cursor()
	sv.add(keys(40, 100)...)
	// Shard 2 comes whole, the others as Rice-coded positions.
	g.Delta, g.After, g.Next = sv.delta(cur, 2), sv.snapshot(t), sv.cursor().Text()
	return g
}

func TestDeltaGolden(t *testing.T) {
	g := checkGolden(t, deltaGolden, makeGoldenDelta(t))
	cp, err := Load(g.Snapshot, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ParseCursor(g.Cursor)
	if err != nil {
		t.Fatal(err)
	}
	next, err := ApplyDelta(cp, cur, g.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encode(t, cp), g.After) || next.Text() != g.Next {
		t.Fatal("the golden delta does not give the golden copy and cursor")
	}
}

// checkGolden fails unless the JSON file holds want, which it writes first
// when UPDATE_GOLDEN=1; it returns what the file holds.
func checkGolden[T any](t *testing.T, file string, want T) T {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		b, _ := json.MarshalIndent(want, "", "  ")
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got T
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s is not what the test makes now; run UPDATE_GOLDEN=1 go test ./snapshot -run %s and review the diff", file, t.Name())
	}
	return got
}
