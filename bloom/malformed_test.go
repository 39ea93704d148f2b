package bloom_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/budget"
	"github.com/edgebloom/edgebloom/internal/refusal"
	"github.com/edgebloom/edgebloom/snapshot"
)

// malformedPath is the corpus of inputs every decoder must refuse, each with
// the error code it must get: written here, read by TestMalformedCorpus and
// by the npm module's tests in Node (js/test/malformed.test.js) and workerd
// (e2e/workerd.test.js). See testdata/README.md.
const malformedPath = "testdata/malformed.json"

type malformedCase struct {
	Name    string `json:"name"`
	About   string `json:"about"`
	Reader  string `json:"reader"` // "filter": any kind by its header; "sharded": a sharded container
	MaxBits uint64 `json:"maxBits"`
	// Room, when set, is the memory the npm module's engine has for the
	// load (engineRoom): the code is the one Go gives with the bound that
	// room makes (loadBudgeted), and the npm module's tests check their
	// engine has that room before they check the code.
	Room uint64 `json:"room,omitempty"`
	Code string `json:"code"`
	// Native, in TestMutations' output only, is the code Go gives under
	// MaxBits alone where it differs from Code (the budget refused first).
	Native string `json:"native,omitempty"`
	Base64 string `json:"base64"`
}

// engineRoom is the room a fresh engine of the npm module has for loads
// with its default memory budget: 64 MiB less 8 MiB kept for the Go
// runtime (DEFAULT_MEMORY_LIMIT and RUNTIME_RESERVE in js/core.js).
const engineRoom = 64<<20 - 8<<20

// jsMaxBits is the npm module's default maxBits (MAX_BITS in js/args.js):
// with it, the memory budget is the bound that counts.
const jsMaxBits = 1 << 32

// loadBudgeted loads data as the npm module's fromBytes does in an engine
// with room bytes for loads: a filter of any kind bounded by maxBits and by
// the bits whose encoding, copied in, fits the room (internal/budget),
// both applied where the decoders check maxBits; a sharded container's
// shards each bounded by an even share of the room (js/sharded.js), its
// router by its shard count as always.
func loadBudgeted(data []byte, maxBits, room uint64) error {
	if len(data) >= 4 && string(data[:4]) == snapshot.Magic {
		bound := maxBits
		if len(data) >= 12 {
			s := uint64(le.Uint32(data[8:]))
			bound = min(maxBits, budget.Bits(1, budget.ShardRecord(room, s)))
		}
		_, err := snapshot.LoadSharded(data, bound)
		return err
	}
	kind := uint8(1)
	if len(data) > offKind {
		kind = data[offKind]
	}
	return decodeAny(data, min(maxBits, budget.Bits(kind, budget.LoadRecord(room))))
}

type malformedFile struct {
	Note  string          `json:"note"`
	Cases []malformedCase `json:"cases"`
}

// Offsets of the header fields (docs/format.md).
const (
	offVersion = 4
	offKind    = 5
	offHash    = 6
	offFlags   = 7
	offSeed    = 8
	offM       = 16
	offK       = 24
	offParts   = 28
	offCount   = 32
	offRate    = 48
	offPayload = 56
)

var le = binary.LittleEndian

// reseal rewrites the checksum of the record at b[off:off+n], so that only
// the lie a case tells is wrong with it.
func reseal(b []byte, off, n int) []byte {
	le.PutUint64(b[off+n-8:], xxhash.Sum64(b[off:off+n-8]))
	return b
}

func resealAll(b []byte) []byte { return reseal(b, 0, len(b)) }

func mustMarshal(f interface{ MarshalBinary() ([]byte, error) }) []byte {
	b, err := f.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

// goodFilters returns one valid encoding of each kind, with keys in it.
func goodFilters() (classic, counting, scalable, window, blocked []byte) {
	c, _ := bloom.New(100, 0.01)
	n, _ := bloom.NewCounting(100, 0.01)
	s, _ := bloom.NewScalable(10, 0.01)
	w, _ := bloom.NewWindow(50, 0.01, 3)
	b, _ := bloom.NewBlocked(100, 0.01)
	for i := range 40 {
		k := []byte(fmt.Sprintf("https://example.com/%d", i))
		c.Add(k)
		n.Add(k)
		s.Add(k)
		w.Add(k)
		b.Add(k)
		if i%15 == 14 {
			w.Rotate()
		}
	}
	return mustMarshal(c), mustMarshal(n), mustMarshal(s), mustMarshal(w), mustMarshal(b)
}

// goodContainer returns a sharded container of three classic shards, as the
// edge service writes it.
func goodContainer() []byte {
	var records [][]byte
	var lengths []uint64
	for i := range 3 {
		f, _ := bloom.New(100, 0.01)
		for j := range 20 {
			f.AddString(fmt.Sprintf("shard-%d-key-%d", i, j))
		}
		r := mustMarshal(f)
		records = append(records, r)
		lengths = append(lengths, uint64(len(r)))
	}
	out := snapshot.AppendHeader(nil, lengths)
	for _, r := range records {
		out = append(out, r...)
	}
	return out
}

func clone(b []byte) []byte { return bytes.Clone(b) }

func generateMalformed() malformedFile {
	classic, counting, scalable, window, blocked := goodFilters()
	container := goodContainer()
	const bound = 1 << 20

	var cases []malformedCase
	add := func(name, about, reader, code string, b []byte) {
		cases = append(cases, malformedCase{Name: name, About: about, Reader: reader, MaxBits: bound, Code: code, Base64: base64.StdEncoding.EncodeToString(b)})
	}
	filter := func(name, about, code string, b []byte) { add(name, about, "filter", code, b) }
	edit := func(b []byte, f func(b []byte)) []byte { b = clone(b); f(b); return b }
	// A header alone, valid on its own, that claims parts records.
	lone := func(kind uint8, m uint64, k, parts uint32, payload uint64) []byte {
		b := clone(classic[:64])
		b[offKind], b[offHash] = kind, 1
		le.PutUint64(b[offM:], m)
		le.PutUint32(b[offK:], k)
		le.PutUint32(b[offParts:], parts)
		le.PutUint64(b[offCount:], 0)
		le.PutUint64(b[offPayload:], payload)
		return b
	}

	filter("empty", "no bytes at all", "ERR_TRUNCATED", []byte{})
	filter("truncated header", "the first 10 bytes of a classic filter", "ERR_TRUNCATED", classic[:10])
	filter("truncated payload", "a classic filter cut 9 bytes before its end", "ERR_TRUNCATED", classic[:len(classic)-9])
	filter("no checksum", "a classic filter without its checksum", "ERR_TRUNCATED", classic[:len(classic)-8])
	filter("truncated window", "a window cut in its last generation", "ERR_TRUNCATED", window[:len(window)-20])
	filter("truncated scalable", "a scalable filter cut in its first layer", "ERR_TRUNCATED", scalable[:100])
	filter("trailing byte", "a classic filter and one byte more", "ERR_CORRUPT", append(clone(classic), 0))
	filter("bad magic", "EBLN instead of EBLM", "ERR_NOT_FILTER", edit(classic, func(b []byte) { b[3] = 'N' }))
	filter("not a filter", "64 bytes of text", "ERR_NOT_FILTER", bytes.Repeat([]byte("hello, world. "), 5))
	filter("format version 2", "version byte 2", "ERR_VERSION", edit(classic, func(b []byte) { b[offVersion] = 2 }))
	filter("hash scheme 9", "an unknown hash scheme", "ERR_VERSION", edit(classic, func(b []byte) { b[offHash] = 9 }))
	filter("kind 9", "an unknown kind", "ERR_KIND", edit(classic, func(b []byte) { b[offKind] = 9 }))
	for _, k := range []struct {
		name string
		b    []byte
	}{{"classic", classic}, {"counting", counting}, {"scalable", scalable}, {"window", window}, {"blocked", blocked}} {
		filter(k.name+" payload bit flipped", "one payload bit of a "+k.name+" filter flipped", "ERR_CHECKSUM",
			edit(k.b, func(b []byte) { b[len(b)-20] ^= 0x10 }))
		filter(k.name+" checksum bit flipped", "one bit of a "+k.name+" filter's checksum flipped", "ERR_CHECKSUM",
			edit(k.b, func(b []byte) { b[len(b)-3] ^= 1 }))
		filter(k.name+" count 2^63", "a "+k.name+" filter whose header says 2^63 keys (checksum matching)", "ERR_CORRUPT",
			resealAll(edit(k.b, func(b []byte) { le.PutUint64(b[offCount:], 1<<63) })))
		filter(k.name+" count past 64m", "a "+k.name+" filter whose count is 64·m+1: more than its bits can have counted (checksum matching)", "ERR_CORRUPT",
			resealAll(edit(k.b, func(b []byte) { le.PutUint64(b[offCount:], 64*le.Uint64(b[offM:])+1) })))
	}
	filter("count 2^64-1", "a classic filter whose count cannot fit any signed or float counter", "ERR_CORRUPT",
		resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offCount:], math.MaxUint64) })))
	filter("m larger than the payload", "a classic header whose m needs more payload than it has", "ERR_CORRUPT",
		resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])+64) })))
	filter("payload length lies", "a classic header whose payload length is 8 more than m needs", "ERR_CORRUPT",
		resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offPayload:], le.Uint64(b[offPayload:])+8) })))
	filter("m 0", "zero bits", "ERR_CORRUPT", resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offM:], 0) })))
	filter("m 2^41", "more bits than MaxBits", "ERR_CORRUPT", resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offM:], 1<<41) })))
	filter("k 0", "no hash functions", "ERR_CORRUPT", resealAll(edit(classic, func(b []byte) { le.PutUint32(b[offK:], 0) })))
	filter("k 65", "more hash functions than MaxHashes", "ERR_CORRUPT", resealAll(edit(classic, func(b []byte) { le.PutUint32(b[offK:], 65) })))
	filter("bits beyond m", "a classic filter of 100 bits with bit 127 set (checksum matching)", "ERR_CORRUPT", func() []byte {
		f, _ := bloom.NewWithSize(100, 3)
		b := mustMarshal(f)
		b[64+15] = 0x80
		return resealAll(b)
	}())
	filter("unknown flag", "flag bit 2 set", "ERR_CORRUPT", resealAll(edit(classic, func(b []byte) { b[offFlags] = 2 })))
	filter("dirty flag", "a classic filter marked as being written (a file's state, never valid as bytes)", "ERR_CHECKSUM",
		resealAll(edit(classic, func(b []byte) { b[offFlags] = 1 })))
	filter("rate NaN", "a target false-positive rate that is NaN", "ERR_CORRUPT",
		resealAll(edit(classic, func(b []byte) { le.PutUint64(b[offRate:], math.Float64bits(math.NaN())) })))
	filter("rate without capacity", "a target rate with capacity 0", "ERR_CORRUPT",
		resealAll(edit(classic, func(b []byte) { le.PutUint64(b[40:], 0) })))
	filter("too large", "a classic filter of 2^21 bits against a bound of 2^20", "ERR_TOO_LARGE", func() []byte {
		f, _ := bloom.NewWithSize(1<<21, 3)
		return mustMarshal(f)[:64] // the header is refused before the payload is read
	}())
	filter("2^20 generations", "the header of a window of 2^20 generations of one bit, 84 MB in all: refused before the payload", "ERR_CORRUPT",
		lone(4, 1<<20, 3, 1<<20, (1<<20)*(64+8+8)))
	filter("4097 generations", "the header of a window of MaxGenerations+1 generations", "ERR_CORRUPT",
		lone(4, 64*4097, 3, 4097, 4097*(64+8+8)))
	filter("65 layers", "the header of a scalable filter of MaxLayers+1 layers", "ERR_CORRUPT", func() []byte {
		b := lone(3, 65*64, 0, 65, 65*(64+8+8))
		le.PutUint64(b[40:], 1)
		return b
	}())
	filter("window generation of another k", "a window whose second generation has k+1 (checksums matching)", "ERR_CORRUPT", func() []byte {
		b := clone(window)
		rec := (len(b) - 72) / 3
		g := 64 + rec
		le.PutUint32(b[g+offK:], le.Uint32(b[g+offK:])+1)
		reseal(b, g, rec)
		return resealAll(b)
	}())
	filter("window generations do not add up", "a window whose header count differs from its generations' (checksum matching)", "ERR_CORRUPT",
		resealAll(edit(window, func(b []byte) { le.PutUint64(b[offCount:], le.Uint64(b[offCount:])+1) })))
	filter("scalable layer count lies", "a scalable filter whose header has one layer more than its payload (checksum matching)", "ERR_CORRUPT",
		resealAll(edit(scalable, func(b []byte) { le.PutUint32(b[offParts:], le.Uint32(b[offParts:])+1) })))
	filter("blocked seed 1", "a split-block filter with a seed (checksum matching)", "ERR_CORRUPT",
		resealAll(edit(blocked, func(b []byte) { b[offSeed] = 1 })))
	filter("blocked m not whole blocks", "a split-block filter whose m is not a multiple of 256", "ERR_CORRUPT",
		resealAll(edit(blocked, func(b []byte) { le.PutUint64(b[offM:], le.Uint64(b[offM:])-8) })))

	// Found by TestMutations and js/test/mutations.test.js (issue #30): the
	// npm module checked the outer length first, Go reads the record in
	// order. Each is refused by what comes first in the record.
	filter("trailing byte after a bad checksum", "a classic filter with a payload bit flipped, and one byte more: the checksum comes before the end", "ERR_CHECKSUM",
		append(edit(classic, func(b []byte) { b[100] ^= 2 }), 0))
	filter("trailing bytes after a bad count", "a counting filter whose count is 2^63 (checksum matching), and 8 bytes more: the header comes before the end", "ERR_CORRUPT",
		append(resealAll(edit(counting, func(b []byte) { le.PutUint64(b[offCount:], 1<<63) })), make([]byte, 8)...))
	filter("cut after a damaged generation", "a window whose first generation has a payload bit flipped, cut in its last generation: the first checksum comes before the end", "ERR_CHECKSUM",
		edit(window, func(b []byte) { b[64+64+10] ^= 1 })[:len(window)-20])
	filter("cut after a layer of hash scheme 9", "a scalable filter whose first layer has hash scheme 9 (checksums matching), cut in its last layer", "ERR_VERSION", func() []byte {
		b := clone(scalable)
		b[64+offHash] = 9
		reseal(b, 64, 72+int(le.Uint64(b[64+offPayload:])))
		return resealAll(b)[:len(b)-20]
	}())
	filter("kind 0 of a split-block filter", "a split-block filter whose kind byte is 0: an unknown kind, refused as such before its hash scheme or sizes are checked", "ERR_KIND",
		edit(blocked, func(b []byte) { b[offKind] = 0 }))
	filter("kind 7 with m 0", "an unknown kind whose m is 0: the kind comes first", "ERR_KIND",
		edit(classic, func(b []byte) { b[offKind] = 7; le.PutUint64(b[offM:], 0) }))
	filter("kind 7 over the bound", "an unknown kind of 2^21 bits against a bound of 2^20: the kind comes first", "ERR_KIND",
		edit(classic, func(b []byte) { b[offKind] = 7; le.PutUint64(b[offM:], 1<<21) }))

	// The npm module's memory budget bounds a load as maxBits does, from the
	// header (a fresh engine with the default budget, under the default
	// maxBits): it refused inputs it could not copy in by their length,
	// after the header, where Go, reading in order, found them damaged. Go
	// given the same bound (loadBudgeted) refuses them alike.
	budgeted := func(name, about, reader, code string, b []byte) {
		cases = append(cases, malformedCase{Name: name, About: about, Reader: reader, MaxBits: jsMaxBits, Room: engineRoom,
			Code: code, Base64: base64.StdEncoding.EncodeToString(b)})
	}
	fit := func(kind uint8) uint64 { return budget.Bits(kind, budget.LoadRecord(engineRoom)) }
	words := func(m, per uint64) uint64 { return 8 * ((m + per - 1) / per) }
	budgeted("budget: classic at the bound", "the header of a classic filter of as many bits as the budget has room to load: it fits, and is cut short", "filter", "ERR_TRUNCATED",
		lone(1, fit(1), 7, 0, words(fit(1), 64)))
	budgeted("budget: classic one bit over", "the header of a classic filter of one bit more than the budget has room to load", "filter", "ERR_TOO_LARGE",
		lone(1, fit(1)+1, 7, 0, words(fit(1)+1, 64)))
	budgeted("budget: counting at the bound", "the header of a counting filter of as many counters as the budget has room to load", "filter", "ERR_TRUNCATED",
		lone(2, fit(2), 7, 0, words(fit(2), 16)))
	budgeted("budget: counting one counter over", "the header of a counting filter of one counter more than the budget has room to load", "filter", "ERR_TOO_LARGE",
		lone(2, fit(2)+1, 7, 0, words(fit(2)+1, 16)))
	budgeted("budget: blocked one block over", "the header of a split-block filter of one block more than the budget has room to load", "filter", "ERR_TOO_LARGE",
		edit(lone(5, fit(5)/256*256+256, 8, 0, fit(5)/256*32+32), func(b []byte) { b[offHash] = 2; le.PutUint64(b[offSeed:], 0) }))
	budgeted("budget: damaged classic over the budget", "a classic filter of 29 MiB with a payload bit flipped, cut to 4 KiB: its size is refused before its checksum is read", "filter", "ERR_TOO_LARGE",
		func() []byte {
			b := lone(1, 29<<23, 7, 0, 29<<20)
			return append(b, bytes.Repeat([]byte{0, 1}, 2048)...)
		}())
	budgeted("budget: scalable over the budget with a bad layer", "a scalable filter of 29 MiB cut in a first layer whose k is 0: its size is refused before its layers are read", "filter", "ERR_TOO_LARGE",
		func() []byte {
			b := lone(3, 29<<23, 0, 1, 72+29<<20)
			le.PutUint64(b[40:], 1000)
			layer := lone(1, 29<<23, 0, 0, 29<<20)
			return append(b, layer...)
		}())
	budgeted("budget: window over the budget cut short", "the header of a window of 3 generations of 10 MiB each, cut after it: its size is refused before it is found short", "filter", "ERR_TOO_LARGE",
		func() []byte {
			b := lone(4, 3*10<<23, 7, 3, 3*(72+10<<20))
			le.PutUint64(b[40:], 1000)
			return b
		}())
	shardFit := budget.Bits(1, budget.ShardRecord(engineRoom, 2))
	shardHeaders := func(m uint64) []byte {
		shard := lone(1, m, 7, 0, words(m, 64))
		out := snapshot.AppendHeader(nil, []uint64{64, 64})
		return append(append(out, shard...), shard...)
	}
	budgeted("budget: shards at their share", "a container of two shard headers each of as many bits as a third of the room holds: they fit, and are cut short", "sharded", "ERR_TRUNCATED",
		shardHeaders(shardFit))
	budgeted("budget: shards over their share", "a container of two shard headers each of one bit more than a third of the room holds: together with one copy they would not fit", "sharded", "ERR_TOO_LARGE",
		shardHeaders(shardFit+1))

	sharded := func(name, about, code string, b []byte) { add(name, about, "sharded", code, b) }
	s := 3
	routerAt := 24 + 8*s
	routerLen := int(le.Uint64(container[16:]))
	firstShard := routerAt + routerLen
	sharded("sharded short", "the first 20 bytes of a container", "ERR_TRUNCATED", container[:20])
	sharded("sharded truncated", "a container cut one byte short", "ERR_TRUNCATED", container[:len(container)-1])
	sharded("sharded trailing byte", "a container and one byte more", "ERR_CORRUPT", append(clone(container), 0))
	sharded("sharded version 2", "container version 2", "ERR_VERSION", edit(container, func(b []byte) { b[4] = 2 }))
	sharded("sharded routing 9", "an unknown routing scheme", "ERR_VERSION", edit(container, func(b []byte) { b[5] = 9 }))
	sharded("sharded reserved", "a reserved byte set", "ERR_CORRUPT", edit(container, func(b []byte) { b[12] = 1 }))
	sharded("sharded one shard", "a shard count of 1", "ERR_CORRUPT", edit(container, func(b []byte) { le.PutUint32(b[8:], 1) }))
	sharded("sharded 2^17 shards", "more shards than MaxShards", "ERR_CORRUPT", edit(container, func(b []byte) { le.PutUint32(b[8:], 1<<17) }))
	sharded("sharded length 2^63", "a shard length of 2^63", "ERR_TRUNCATED", edit(container, func(b []byte) { le.PutUint64(b[24:], 1<<63) }))
	sharded("sharded lengths shifted", "8 bytes moved from the first shard's length to the second's", "ERR_CORRUPT", edit(container, func(b []byte) {
		le.PutUint64(b[24:], le.Uint64(b[24:])+8)
		le.PutUint64(b[32:], le.Uint64(b[32:])-8)
	}))
	sharded("sharded router seed 0", "a router of seed 0: it routes keys to other shards than the ones that hold them (checksum matching)", "ERR_CORRUPT",
		edit(container, func(b []byte) {
			le.PutUint64(b[routerAt+offSeed:], 0)
			reseal(b, routerAt, routerLen)
		}))
	sharded("sharded router bit set", "a router with a bit set (checksum matching)", "ERR_CORRUPT", edit(container, func(b []byte) {
		b[routerAt+64] = 1
		reseal(b, routerAt, routerLen)
	}))
	sharded("sharded router k 2", "a router with two hash functions (checksum matching)", "ERR_CORRUPT", edit(container, func(b []byte) {
		le.PutUint32(b[routerAt+offK:], 2)
		reseal(b, routerAt, routerLen)
	}))
	sharded("sharded router checksum", "a router whose checksum is wrong", "ERR_CHECKSUM", edit(container, func(b []byte) { b[firstShard-1] ^= 1 }))
	sharded("sharded shard bit flipped", "a payload bit of the first shard flipped", "ERR_CHECKSUM", edit(container, func(b []byte) { b[firstShard+70] ^= 4 }))
	sharded("sharded shard count 2^63", "a shard whose count is 2^63 (checksum matching)", "ERR_CORRUPT", edit(container, func(b []byte) {
		le.PutUint64(b[firstShard+offCount:], 1<<63)
		reseal(b, firstShard, int(le.Uint64(b[24:])))
	}))
	// A shard's record is read as a classic filter: one of another kind is
	// ERR_KIND before that kind's own checks (issue #30).
	shardOfKind := func(kind byte, edit func(b []byte)) []byte {
		b := clone(container)
		b[firstShard+offKind] = kind
		if edit != nil {
			edit(b[firstShard:])
		}
		return b
	}
	sharded("sharded blocked shard", "a shard whose kind byte says split-block, which has another hash scheme", "ERR_KIND", shardOfKind(5, nil))
	sharded("sharded counting shard with k 0", "a shard whose kind byte says counting and whose k is 0", "ERR_KIND",
		shardOfKind(2, func(b []byte) { le.PutUint32(b[offK:], 0) }))
	sharded("sharded counting shard", "a counting filter where a classic shard belongs", "ERR_KIND", func() []byte {
		n, _ := bloom.NewCounting(100, 0.01)
		r := mustMarshal(n)
		out := snapshot.AppendHeader(nil, []uint64{uint64(len(r)), uint64(len(r)), uint64(len(r))})
		return append(append(append(out, r...), r...), r...)
	}())

	return malformedFile{
		Note:  "Inputs every decoder must refuse, with the code it must refuse them with. Written by bloom/malformed_test.go (UPDATE_GOLDEN=1); see README.md.",
		Cases: cases,
	}
}

// codeOf returns the npm module's error code for a Go decoding error.
func codeOf(err error) string { return refusal.Code(err) }

// decodeAny decodes data as the kind its header names, as the npm module's
// fromBytes does, and refuses trailing bytes.
func decodeAny(data []byte, maxBits uint64) error {
	r := bytes.NewReader(data)
	var err error
	kind := byte(1)
	if len(data) > 5 {
		kind = data[5]
	}
	switch kind {
	case 2:
		_, err = bloom.DecodeCounting(r, maxBits)
	case 3:
		_, err = bloom.DecodeScalable(r, maxBits)
	case 4:
		_, err = bloom.DecodeWindow(r, maxBits)
	case 5:
		_, err = bloom.DecodeBlocked(r, maxBits)
	default:
		_, err = bloom.Decode(r, maxBits)
	}
	if err == nil && r.Len() != 0 {
		err = fmt.Errorf("%w: trailing bytes", bloom.ErrCorrupt)
	}
	return err
}

func encodeMalformed(v malformedFile) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// TestMalformedCorpus checks that Go refuses every input of the corpus with
// its code, and that the file is what the generator writes now.
func TestMalformedCorpus(t *testing.T) {
	want := encodeMalformed(generateMalformed())
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(malformedPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(malformedPath)
	if err != nil {
		t.Fatal(err)
	}
	var v malformedFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if names[c.Name] {
				t.Fatalf("case name %q used twice", c.Name)
			}
			names[c.Name] = true
			b, err := base64.StdEncoding.DecodeString(c.Base64)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.Room != 0:
				err = loadBudgeted(b, c.MaxBits, c.Room)
			case c.Reader == "filter":
				err = decodeAny(b, c.MaxBits)
			case c.Reader == "sharded":
				_, err = snapshot.LoadSharded(b, c.MaxBits)
			default:
				t.Fatalf("reader %q", c.Reader)
			}
			if got := codeOf(err); got != c.Code {
				t.Errorf("%s: got %s (%v); want %s", c.About, got, err, c.Code)
			}
		})
	}
	if !bytes.Equal(data, want) {
		t.Errorf("%s is not what the generator writes now; run UPDATE_GOLDEN=1 go test ./bloom -run TestMalformedCorpus and review the diff", malformedPath)
	}
}
