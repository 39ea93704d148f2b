package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// serviceGolden is the edge service's snapshot of a 4-shard filter of
// fixed parameters and keys, and its totals, written by
// worker/test/sharded-golden.test.js from the Worker in workerd.
const serviceGolden = "testdata/service-4shards"

// goldenKeys are the keys the Worker was sent, in order: 10,000 ASCII
// URLs, then for each i < 100 a key with é, one with Japanese and one with
// an emoji.
func goldenKeys() []string {
	var out []string
	for i := range 10000 {
		out = append(out, fmt.Sprintf("https://example.com/page/%d", i))
	}
	for i := range 100 {
		out = append(out, fmt.Sprintf("https://example.com/café/%d", i), fmt.Sprintf("https://例え.jp/ページ/%d", i), fmt.Sprintf("https://example.com/😀/%d", i))
	}
	return out
}

// NewSharded with the service's parameters, given the service's keys in
// the service's order, is the service's snapshot byte for byte (counts
// included), whether the keys come one by one or in batches; its
// statistics are the service's totals.
func TestShardedIsServiceSnapshot(t *testing.T) {
	want, err := os.ReadFile(serviceGolden + ".snap")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Params struct {
			Capacity  uint64  `json:"capacity"`
			ErrorRate float64 `json:"errorRate"`
			Shards    int     `json:"shards"`
		} `json:"params"`
		Keys  int `json:"keys"`
		Total struct {
			Bits, Count, SetBits      uint64
			Hashes                    uint32
			EstimatedCount, FillRatio float64
			EstimatedErrorRate        float64 `json:"estimatedErrorRate"`
		} `json:"total"`
	}
	data, err := os.ReadFile(serviceGolden + ".json")
	if err != nil || json.Unmarshal(data, &golden) != nil {
		t.Fatalf("%s.json: %v", serviceGolden, err)
	}
	ks := goldenKeys()
	if len(ks) != golden.Keys {
		t.Fatalf("%d keys; the service was sent %d", len(ks), golden.Keys)
	}
	p := golden.Params
	one, batch := newShardedOf(t, p.Capacity, p.ErrorRate, p.Shards), newShardedOf(t, p.Capacity, p.ErrorRate, p.Shards)
	for _, k := range ks {
		one.AddString(k)
	}
	batch.AddManyString(ks[:10000], nil)
	batch.AddManyString(ks[10000:], nil)
	for name, s := range map[string]*Sharded{"AddString": one, "AddManyString": batch} {
		got, err := s.MarshalBinary()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: the bytes differ from the service's snapshot (%d bytes, want %d)", name, len(got), len(want))
		}
	}
	loaded, err := LoadSharded(want, 1<<20)
	if err != nil || !loaded.Equal(one) {
		t.Fatalf("LoadSharded of the service's snapshot: %v", err)
	}
	st, tot := one.Stats(), golden.Total
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*b }
	if st.Bits != tot.Bits || st.Hashes != tot.Hashes || st.Count != tot.Count || st.SetBits != tot.SetBits ||
		!near(st.EstimatedCount, tot.EstimatedCount) || !near(st.FillRatio, tot.FillRatio) || !near(st.EstimatedFPR, tot.EstimatedErrorRate) {
		t.Fatalf("Stats %+v; the service's totals %+v", st, tot)
	}
	if one.EncodedSize() != uint64(len(want)) {
		t.Fatalf("EncodedSize %d; the snapshot has %d bytes", one.EncodedSize(), len(want))
	}
}

func newShardedOf(t testing.TB, capacity uint64, fpRate float64, shards int) *Sharded {
	t.Helper()
	s, err := NewSharded(capacity, fpRate, shards)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
