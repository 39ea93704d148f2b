package snapshot

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/refusal"
)

// hostileDir holds deltas that every reader must refuse, each with the code
// it must refuse it with (manifest.json), applied to the copy copy.snap at
// the manifest's cursor: written by TestHostileDeltas (UPDATE_GOLDEN=1),
// checked by it in Go and by js/test/hostile-deltas.test.js with the npm
// module's applyDelta. README.md in testdata says more.
const hostileDir = "testdata/hostile-deltas"

type hostileCase struct {
	Name   string `json:"name"`
	About  string `json:"about"`
	File   string `json:"file"`
	Cursor string `json:"cursor,omitempty"` // the manifest's when empty
	Code   string `json:"code"`
}

type hostileManifest struct {
	Note   string        `json:"note"`
	Copy   string        `json:"copy"`
	Cursor string        `json:"cursor"`
	Cases  []hostileCase `json:"cases"`
}

// deltaCode returns the npm module's applyDelta code for a Go error of
// DecodeDelta or ApplyDelta.
func deltaCode(err error) string {
	switch {
	case errors.Is(err, ErrCursor):
		return "ERR_ARG"
	case errors.Is(err, bloom.ErrIncompatible):
		return "ERR_INCOMPATIBLE"
	case errors.Is(err, ErrGeneration):
		return "ERR_GENERATION"
	case errors.Is(err, ErrGap):
		return "ERR_GAP"
	}
	return refusal.Code(err)
}

// withCRC returns b with its last four bytes replaced by the CRC-32 of the
// rest, so that a lie in it reaches the checks past the checksum.
func withCRC(b []byte) []byte {
	b = bytes.Clone(b)
	end := len(b) - deltaTrailer
	binary.LittleEndian.PutUint32(b[end:], crc32.ChecksumIEEE(b[:end]))
	return b
}

// edited returns a copy of delta changed by edit, its CRC made to match.
func edited(delta []byte, edit func(b []byte)) []byte {
	b := bytes.Clone(delta)
	edit(b)
	return withCRC(b)
}

// recordAt returns the offset of record i of delta.
func recordAt(delta []byte, i int) int {
	off := deltaHeaderSize
	for range i {
		off += deltaRecordHeader + int(binary.LittleEndian.Uint32(delta[off+36:]))
	}
	return off
}

// rawRecord is one record with the given fields and body as they are.
func rawRecord(shard, epoch uint32, from, to, count uint64, n uint32, body []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, shard)
	b = le.AppendUint32(b, epoch)
	b = le.AppendUint64(b, from)
	b = le.AppendUint64(b, to)
	b = le.AppendUint64(b, count)
	b = le.AppendUint32(b, n)
	b = le.AppendUint32(b, uint32(len(body)))
	return append(b, body...)
}

func makeHostile(t *testing.T) (hostileManifest, map[string][]byte) {
	sv := newService(t, 3)
	sv.add(keys(0, 40)...)
	copyBytes, cur := sv.snapshot(t), sv.cursor()
	sv.add(keys(40, 100)...)
	good, whole := sv.delta(cur), sv.delta(cur, 1)
	f := sv.shards[0]
	m, k, seed := f.NumBits(), f.NumHashes(), f.Seed()
	le := binary.LittleEndian
	// A delta of one record for shard 0 at the copy's position, body as given.
	one := func(version uint8, n uint32, body []byte) []byte {
		d := appendDeltaHeader(nil, version, 7, seed, m, k, 3, 1)
		d = append(d, rawRecord(0, 100, cur.Shards[0].Position, cur.Shards[0].Position+1, 1, n, body)...)
		return AppendDeltaTrailer(d)
	}
	rice := func(pos ...uint64) []byte { return appendRice(nil, pos) }
	shardBytes, _ := sv.shards[1].MarshalBinary()
	wholeBody := func(enc []byte) []byte { return append([]byte{deltaCodingShard}, enc...) }
	wholeOf := func(enc []byte, n uint32, from, count uint64) []byte {
		d := appendDeltaHeader(nil, deltaVersion, 7, seed, m, k, 3, 1)
		d = append(d, rawRecord(1, 101, from, 9, count, n, wholeBody(enc))...)
		return AppendDeltaTrailer(d)
	}
	other, _ := bloom.New(2000, 0.01)
	otherBytes, _ := other.MarshalBinary()
	counting, _ := bloom.NewCounting(1000, 0.01)
	countingBytes, _ := counting.MarshalBinary()
	damaged := bytes.Clone(shardBytes)
	damaged[bloom.HeaderSize+3] ^= 0x10
	garbage := bytes.Repeat([]byte{0xA5}, len(shardBytes))
	serviceOf := func(s int) []byte {
		o := newService(t, s)
		o.add(keys(0, 40)...)
		c := o.cursor()
		o.add(keys(40, 60)...)
		return o.delta(c)
	}
	cursorOf := func(edit func(c *Cursor)) string {
		c := Cursor{Generation: cur.Generation, Shards: slices.Clone(cur.Shards)}
		edit(&c)
		return c.Text()
	}
	unary := append([]byte{deltaCodingRice, 0}, bytes.Repeat([]byte{0xFF}, 2000)...)
	v1rice := func() []byte {
		d, _ := DecodeDelta(good)
		out := appendDeltaHeader(nil, deltaVersion1, d.Generation, d.Seed, d.M, d.K, d.Shards, uint32(len(d.Records)))
		for _, r := range d.Records {
			out = appendDeltaRecord(out, r, deltaVersion) // Rice bodies under a version 1 header
		}
		return AppendDeltaTrailer(out)
	}
	v2varints := func() []byte {
		body := binary.AppendUvarint(nil, 300)
		body = binary.AppendUvarint(body, 5)
		return one(deltaVersion, 2, body)
	}
	cases := []struct {
		name, about, code string
		data              []byte
		cursor            string
	}{
		// The header.
		{"empty", "no bytes", "ERR_TRUNCATED", nil, ""},
		{"shorter than a delta", "51 bytes", "ERR_TRUNCATED", good[:51], ""},
		{"magic", `"EBDM"`, "ERR_NOT_FILTER", edited(good, func(b []byte) { b[3] = 'M' }), ""},
		{"a snapshot", "the copy itself, not a delta", "ERR_NOT_FILTER", copyBytes, ""},
		{"version 3", "a delta version this reader does not know", "ERR_VERSION", edited(good, func(b []byte) { b[4] = 3 }), ""},
		{"version 0", "delta version 0", "ERR_VERSION", edited(good, func(b []byte) { b[4] = 0 }), ""},
		{"kind 2", "a delta of counting shards", "ERR_KIND", edited(good, func(b []byte) { b[5] = 2 }), ""},
		{"reserved", "reserved byte 6 set", "ERR_CORRUPT", edited(good, func(b []byte) { b[6] = 1 }), ""},
		{"reserved at 44", "the reserved word after r set", "ERR_CORRUPT", edited(good, func(b []byte) { b[44] = 1 }), ""},
		{"m 0", "m = 0", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[24:], 0) }), ""},
		{"m over 2^32", "m = 2^32 + 1", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[24:], 1<<32+1) }), ""},
		{"m over 2^53", "m = 2^63", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[24:], 1<<63) }), ""},
		{"k 0", "k = 0", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[32:], 0) }), ""},
		{"k 65", "k = 65", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[32:], 65) }), ""},
		{"0 shards", "s = 0", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[36:], 0) }), ""},
		{"65537 shards", "s over MaxShards", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[36:], 1<<16+1) }), ""},
		{"more records than shards", "r = 4 of s = 3", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[40:], 4) }), ""},
		{"huge record count", "r = 2^32 - 1 of s = 2^32 - 1", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[36:], math.MaxUint32); le.PutUint32(b[40:], math.MaxUint32) }), ""},
		{"generation over 2^53", "generation 2^60: no service makes it, and no JS number holds it", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[8:], 1<<60) }), ""},
		// The lengths and the checksum.
		{"cut short by one", "the last byte missing", "ERR_TRUNCATED", good[:len(good)-1], ""},
		{"cut in a record header", "cut 20 bytes into the first record", "ERR_TRUNCATED", append(bytes.Clone(good[:68]), 0, 0, 0, 0), ""},
		{"cut in half", "the first half", "ERR_TRUNCATED", good[:len(good)/2], ""},
		{"record length past the end", "b = 2^32 - 1", "ERR_TRUNCATED", edited(good, func(b []byte) { le.PutUint32(b[recordAt(b, 0)+36:], math.MaxUint32) }), ""},
		{"bytes after the last record", "three bytes between the records and the CRC", "ERR_CORRUPT", withCRC(slices.Insert(bytes.Clone(good), len(good)-4, 1, 2, 3)), ""},
		{"no records said, records follow", "r = 0 with records", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[40:], 0) }), ""},
		{"flipped bit", "one bit of a record flipped, the CRC left", "ERR_CHECKSUM", func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 4; return b }(), ""},
		// The records' fields.
		{"shard index s", "a record of shard 3 of 3", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[recordAt(b, 0):], 3) }), ""},
		{"records out of order", "shard 1 before shard 0", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[recordAt(b, 0):], 1); le.PutUint32(b[recordAt(b, 1):], 0) }), ""},
		{"a shard twice", "two records of shard 0", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint32(b[recordAt(b, 1):], 0) }), ""},
		{"from after to", "from 9, to 8", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[recordAt(b, 0)+8:], 9); le.PutUint64(b[recordAt(b, 0)+16:], 8) }), ""},
		{"to over 2^53", "to = 2^60", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[recordAt(b, 0)+16:], 1<<60) }), ""},
		{"count over 64 m", "a count no filter of m bits reaches", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[recordAt(b, 0)+24:], 64*m+1) }), ""},
		{"count over 2^53", "count 2^63", "ERR_CORRUPT", edited(good, func(b []byte) { le.PutUint64(b[recordAt(b, 0)+24:], 1<<63) }), ""},
		// Rice-coded positions.
		{"huge position count", "n = 2^32 - 1 in a body of 3 bytes", "ERR_CORRUPT", one(deltaVersion, math.MaxUint32, rice(1, 2, 3)), ""},
		{"more positions than m", "n = m + 1 in a body long enough for them", "ERR_CORRUPT", one(deltaVersion, uint32(m+1), append([]byte{deltaCodingRice, 0}, make([]byte, m/8+2)...)), ""},
		{"gap past m", "the second gap goes past m", "ERR_CORRUPT", one(deltaVersion, 2, rice(5, m+3)), ""},
		{"position m", "one position, m itself", "ERR_CORRUPT", one(deltaVersion, 1, rice(m)), ""},
		{"unary run past m", "a quotient of 16,000 ones, past any gap below m", "ERR_CORRUPT", one(deltaVersion, 1, unary), ""},
		{"Rice parameter 25", "r = 25, one past the largest", "ERR_CORRUPT", one(deltaVersion, 3, append([]byte{deltaCodingRice, 25}, rice(1, 2, 3)[2:]...)), ""},
		{"Rice parameter 255", "r = 255", "ERR_CORRUPT", one(deltaVersion, 3, append([]byte{deltaCodingRice, 255}, rice(1, 2, 3)[2:]...)), ""},
		{"coding 3", "a coding byte this version does not know", "ERR_CORRUPT", one(deltaVersion, 3, append([]byte{3}, rice(1, 2, 3)[1:]...)), ""},
		{"empty body", "b = 0 in version 2", "ERR_CORRUPT", one(deltaVersion, 0, nil), ""},
		{"one position more than coded", "n = 4, three gaps of r = 7 coded", "ERR_CORRUPT", one(deltaVersion, 4, rice(100, 300, 700)), ""},
		{"bits after the last gap", "a one-bit after the last gap", "ERR_CORRUPT", one(deltaVersion, 3, func() []byte { b := rice(1, 2, 3); b[len(b)-1] |= 0x80; return b }()), ""},
		// Whole-shard records.
		{"whole shard not a filter", "coding 2, then bytes of a shard's length that are no filter", "ERR_CORRUPT", wholeOf(garbage, 0, 0, 0), ""},
		{"whole shard a counting filter", "coding 2, then a counting filter", "ERR_CORRUPT", wholeOf(countingBytes, 0, 0, 0), ""},
		{"whole shard a container", "coding 2, then the copy's sharded container", "ERR_CORRUPT", wholeOf(copyBytes, 0, 0, 0), ""},
		{"whole shard of another m", "coding 2, then a filter of another size", "ERR_CORRUPT", wholeOf(otherBytes, 0, 0, other.Count()), ""},
		{"whole shard damaged", "coding 2, then the shard with a payload bit flipped (its own checksum fails)", "ERR_CORRUPT", wholeOf(damaged, 0, 0, sv.shards[1].Count()), ""},
		{"whole shard cut short", "coding 2, then the shard less its last byte", "ERR_CORRUPT", wholeOf(shardBytes[:len(shardBytes)-1], 0, 0, sv.shards[1].Count()), ""},
		{"whole shard with positions", "coding 2 with n = 3", "ERR_CORRUPT", wholeOf(shardBytes, 3, 0, sv.shards[1].Count()), ""},
		{"whole shard from 5", "coding 2 with from = 5", "ERR_CORRUPT", wholeOf(shardBytes, 0, 5, sv.shards[1].Count()), ""},
		{"whole shard count lies", "coding 2, its count one more than the shard's", "ERR_CORRUPT", wholeOf(shardBytes, 0, 0, sv.shards[1].Count()+1), ""},
		{"whole shard damaged beside a gap", "a damaged whole shard, and shard 0 starting elsewhere than the copy: the delta's form is checked first", "ERR_CORRUPT",
			edited(whole, func(b []byte) { b[recordAt(b, 1)+41+bloom.HeaderSize] ^= 1 }), cursorOf(func(c *Cursor) { c.Shards[0].Position++ })},
		// Versions mixed.
		{"version 1 with a whole shard", "a coding-2 body under a version 1 header (read as varints)", "ERR_CORRUPT", edited(whole, func(b []byte) { b[4] = 1 }), ""},
		{"version 1 with Rice bodies", "version 2 records under a version 1 header", "ERR_CORRUPT", v1rice(), ""},
		{"version 2 with varints", "LEB128 positions under a version 2 header", "ERR_CORRUPT", v2varints(), ""},
		{"version 1 zero gap", "a repeated position in version 1", "ERR_CORRUPT", one(deltaVersion1, 2, []byte{5, 0}), ""},
		{"version 1 position past m", "a varint position of 2^35", "ERR_CORRUPT", one(deltaVersion1, 1, binary.AppendUvarint(nil, 1<<35)), ""},
		{"version 1 varint too long", "eleven continuation bytes", "ERR_CORRUPT", one(deltaVersion1, 1, append(bytes.Repeat([]byte{0x80}, 11), 1)), ""},
		// Well formed, but not the copy's.
		{"2 shards", "a delta of a 2-shard filter", "ERR_INCOMPATIBLE", serviceOf(2), ""},
		{"4 shards", "a delta of a 4-shard filter", "ERR_INCOMPATIBLE", serviceOf(4), ""},
		{"1 shard", "a plain filter's delta", "ERR_INCOMPATIBLE", serviceOf(1), ""},
		{"another m", "shards of m + 64", "ERR_INCOMPATIBLE", edited(good, func(b []byte) { le.PutUint64(b[24:], m+64) }), ""},
		{"another k", "shards of k + 1", "ERR_INCOMPATIBLE", edited(good, func(b []byte) { le.PutUint32(b[32:], k+1) }), ""},
		{"another seed", "shards of seed 1", "ERR_INCOMPATIBLE", edited(good, func(b []byte) { le.PutUint64(b[16:], 1) }), ""},
		{"cursor of 2 shards", "a good delta, a cursor of another shard count", "ERR_ARG", good, cursorOf(func(c *Cursor) { c.Shards = c.Shards[:2] })},
		{"cursor of 4 shards", "a good delta, a cursor of another shard count", "ERR_ARG", good, cursorOf(func(c *Cursor) { c.Shards = append(c.Shards, ShardPosition{103, 0}) })},
		{"another generation", "the copy is of generation 8", "ERR_GENERATION", good, cursorOf(func(c *Cursor) { c.Generation = 8 })},
		{"another epoch", "shard 2's storage was made again", "ERR_GENERATION", good, cursorOf(func(c *Cursor) { c.Shards[2].Epoch++ })},
		{"a gap", "the copy's shard 0 is one row further", "ERR_GAP", good, cursorOf(func(c *Cursor) { c.Shards[0].Position++ })},
	}
	files := map[string][]byte{"copy.snap": copyBytes}
	man := hostileManifest{
		Note: "Deltas every reader refuses, with the npm module's code (Go: deltaCode in snapshot/hostile_test.go), each applied to copy.snap at cursor (or the case's). Written by snapshot's TestHostileDeltas (UPDATE_GOLDEN=1); read by js/test/hostile-deltas.test.js. docs/format.md, \"Deltas\".",
		Copy: "copy.snap", Cursor: cur.Text(),
	}
	slug := regexp.MustCompile(`[^a-z0-9]+`)
	for _, c := range cases {
		file := strings.Trim(slug.ReplaceAllString(strings.ToLower(c.name), "-"), "-") + ".delta"
		if _, dup := files[file]; dup {
			t.Fatalf("two cases named %q", file)
		}
		files[file] = c.data
		man.Cases = append(man.Cases, hostileCase{Name: c.name, About: c.about, File: file, Cursor: c.cursor, Code: c.code})
	}
	return man, files
}

// Every hostile delta is refused with its code, before anything larger
// than the input is allocated, and leaves the copy as it was; the files are
// what the generator writes now.
func TestHostileDeltas(t *testing.T) {
	man, files := makeHostile(t)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		os.RemoveAll(hostileDir)
		if err := os.MkdirAll(hostileDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(hostileDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := json.MarshalIndent(man, "", "  ")
		if err := os.WriteFile(filepath.Join(hostileDir, "manifest.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, filepath.Join(hostileDir, "manifest.json"), man)
	stored, _ := filepath.Glob(filepath.Join(hostileDir, "*"))
	if len(stored) != len(files)+1 {
		t.Errorf("%s holds %d files; the generator writes %d", hostileDir, len(stored), len(files)+1)
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(hostileDir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what the generator writes now (%v); run UPDATE_GOLDEN=1 go test ./snapshot -run TestHostileDeltas", name, err)
		}
	}
	for _, c := range man.Cases {
		t.Run(c.Name, func(t *testing.T) {
			data := files[c.File]
			cp, err := Load(files[man.Copy], 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			token := cmp.Or(c.Cursor, man.Cursor)
			cur, err := ParseCursor(token)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			next, err := ApplyDelta(cp, cur, data)
			runtime.ReadMemStats(&after)
			if got := deltaCode(err); got != c.Code {
				t.Fatalf("%s: %s (%v); want %s", c.About, got, err, c.Code)
			}
			// A record's positions are at most 8 a byte of its body, 8
			// bytes each: at most 64 bytes a byte of input, plus the
			// errors' and cursors' few.
			if n := after.TotalAlloc - before.TotalAlloc; n > 64*uint64(len(data))+16<<10 {
				t.Errorf("%s: %d bytes allocated for a delta of %d", c.About, n, len(data))
			}
			if next.Text() != token {
				t.Error("a refused delta moved the cursor")
			}
			if !bytes.Equal(encode(t, cp), files[man.Copy]) {
				t.Error("a refused delta changed the copy")
			}
		})
	}
}
