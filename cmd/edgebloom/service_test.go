package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/snapshot"
)

func TestServiceTarget(t *testing.T) {
	for _, tt := range []struct{ in, base, name string }{
		{"http://127.0.0.1:8787", "http://127.0.0.1:8787", ""},
		{"http://127.0.0.1:8787/", "http://127.0.0.1:8787", ""},
		{"https://bloom.example/v1/filters/crawl", "https://bloom.example", "crawl"},
		{"https://bloom.example/api/v1/filters/crawl/", "https://bloom.example/api", "crawl"},
	} {
		base, name, err := serviceTarget(tt.in)
		if err != nil || base != tt.base || name != tt.name {
			t.Errorf("serviceTarget(%q): got %q, %q, %v; want %q, %q", tt.in, base, name, err, tt.base, tt.name)
		}
	}
	for _, bad := range []string{"http://", "http://h/v1/filters/", "http://h/v1/filters/a/b", "http://h?x=1"} {
		if _, _, err := serviceTarget(bad); err == nil {
			t.Errorf("serviceTarget(%q): no error", bad)
		}
	}
}

// A merge body holds at most mergePositions positions and
// client.MaxBodyBytes bytes, however sparse the bits: the pieces of a
// shard are its positions, in order, each once.
func TestMergeBodies(t *testing.T) {
	f, _ := bloom.New(20_000_000, 0.01) // 2^27.5 bits, under client.MaxShardBits
	for _, spread := range []uint64{1, 3, 97, 4093} {
		var positions []uint64
		for p := uint64(0); p < f.NumBits() && len(positions) < 3*mergePositions; p += spread {
			positions = append(positions, p)
		}
		var got []uint64
		for rest := positions; len(rest) > 0; {
			body, n := mergeBody(0, f, 1, 0, rest)
			if len(body) > client.MaxBodyBytes || n > mergePositions || n < 1 {
				t.Fatalf("spread %d: a piece of %d positions in %d bytes", spread, n, len(body))
			}
			d, err := snapshot.DecodeDelta(body)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, d.Records[0].Positions...)
			rest = rest[n:]
		}
		if len(got) != len(positions) || got[len(got)-1] != positions[len(positions)-1] {
			t.Fatalf("spread %d: %d positions back of %d", spread, len(got), len(positions))
		}
	}
}

func TestSetPositions(t *testing.T) {
	f, _ := bloom.New(1000, 0.01)
	for _, k := range []string{"a", "b", "https://c.example/"} {
		f.AddString(k)
	}
	g, _ := bloom.New(1000, 0.01)
	if err := g.ApplyChanges(setPositions(f), f.Count()); err != nil || !g.Equal(f) || uint64(len(setPositions(f))) != f.SetBits() {
		t.Fatalf("the positions of setPositions do not make the filter again (%v)", err)
	}
}

// The reader gives every set position once, in order, across its refills,
// whatever is consumed of each fill.
func TestPositionReader(t *testing.T) {
	f, _ := bloom.New(2_000_000, 0.01)
	var want []uint64
	for p := uint64(3); p < f.NumBits(); p += 5 {
		want = append(want, p)
	}
	if err := f.ApplyChanges(want, 1); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	r := newPositionReader(f)
	for step := 1; ; step++ {
		p := r.fill()
		if len(p) == 0 {
			break
		}
		if len(p) < mergePositions && !r.done() {
			t.Fatalf("fill gave %d positions with more to read", len(p))
		}
		n := min(len(p), 1+len(p)/(1+step%3)) // some of it, as a piece under 1 MiB takes
		got = append(got, p[:n]...)
		r.consume(n)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read %d positions; want %d", len(got), len(want))
	}
}

// build --shards writes a sharded snapshot whose shards are the service's
// for the same parameters: each key in the shard snapshot.Route picks,
// each shard made for ceil(n / shards) keys.
func TestBuildShards(t *testing.T) {
	dir := t.TempDir()
	expect(t, dir, urls(0, 5000), 0, "build", "-n", "10000", "--shards", "3", "-o", "s.bloom")
	data, err := os.ReadFile(filepath.Join(dir, "s.bloom"))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := snapshot.LoadSharded(data, client.MaxShardBits)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := bloom.New(3334, 0.01)
	var count uint64
	for _, f := range sh.Shards {
		if f.NumBits() != want.NumBits() || f.NumHashes() != want.NumHashes() || f.Capacity() != 3334 {
			t.Fatalf("a shard of %d bits, %d hashes, capacity %d; want %d, %d, 3334", f.NumBits(), f.NumHashes(), f.Capacity(), want.NumBits(), want.NumHashes())
		}
		count += f.Count()
	}
	for _, k := range strings.Fields(urls(0, 5000)) {
		if !sh.Shards[snapshot.Route(sh.Router, k)].HasString(k) {
			t.Fatalf("%s is not in its shard", k)
		}
	}
	if count < 4990 || count > 5000 {
		t.Errorf("the shards count %d keys; want about 5000", count)
	}
	// The commands that read a filter file read a sharded one too: what
	// pull writes of a service filter of several shards.
	keys := strings.Fields(urls(0, 5000))
	expect(t, dir, "", 0, "check", "-q", "s.bloom", keys[0], keys[4999])
	expect(t, dir, "", 1, "check", "-q", "s.bloom", "https://example.com/never-added")
	r := expect(t, dir, "", 0, "info", "--json", "s.bloom")
	var info struct {
		Kind   string
		Shards int
		Bits   uint64
		Count  uint64
	}
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatal(err)
	}
	if info.Kind != "sharded" || info.Shards != 3 || info.Bits != sh.NumBits() || info.Count != count {
		t.Errorf("info: %+v; want sharded, 3 shards, %d bits, count %d", info, sh.NumBits(), count)
	}
	expect(t, dir, "", 0, "add", "s.bloom", "https://example.com/added-later")
	expect(t, dir, "", 0, "check", "-q", "s.bloom", "https://example.com/added-later", keys[1])
	after, err := os.ReadFile(filepath.Join(dir, "s.bloom"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.LoadSharded(after, client.MaxShardBits); err != nil {
		t.Fatalf("after add, the file is no sharded container: %v", err)
	}
	for _, bad := range [][]string{{"--shards", "1"}, {"--shards", "65"}, {"--shards", "2", "--window", "3"}, {"--shards", "2", "--kind", "blocked"}} {
		r := expect(t, dir, "", 2, append([]string{"build", "-n", "100", "-o", "x.bloom"}, bad...)...)
		if !strings.Contains(r.stderr, "--shards") {
			t.Errorf("build %v: %q; want an error naming --shards", bad, r.stderr)
		}
	}
}
