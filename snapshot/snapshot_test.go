package snapshot

import (
	"errors"
	"fmt"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

func container(t *testing.T, shards int, keys []string) ([]byte, []*bloom.Filter) {
	t.Helper()
	filters := make([]*bloom.Filter, shards)
	lengths := make([]uint64, shards)
	for i := range filters {
		filters[i], _ = bloom.New(1000, 0.01)
		lengths[i] = filters[i].EncodedSize()
	}
	r := Router(shards)
	for _, k := range keys {
		filters[Route(r, k)].AddString(k)
	}
	out := AppendHeader(nil, lengths)
	if len(out) != HeaderSize(shards) {
		t.Fatalf("header is %d bytes; HeaderSize says %d", len(out), HeaderSize(shards))
	}
	for _, f := range filters {
		b, _ := f.MarshalBinary()
		out = append(out, b...)
	}
	return out, filters
}

func TestRoundTrip(t *testing.T) {
	keys := make([]string, 2000)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://example.org/%d", i)
	}
	data, filters := container(t, 4, keys)
	set, err := Load(data, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sh := set.(*Sharded)
	for i, f := range filters {
		if !sh.Shards[i].Equal(f) {
			t.Errorf("shard %d differs after loading", i)
		}
	}
	for _, k := range keys {
		if !set.HasString(k) || !set.Has([]byte(k)) {
			t.Fatalf("HasString(%q): got false; want true", k)
		}
	}
}

func TestRouteSpread(t *testing.T) {
	r := Router(8)
	counts := make([]int, 8)
	for i := range 80000 {
		counts[Route(r, fmt.Sprint("k", i))]++
	}
	for i, n := range counts {
		if n < 9500 || n > 10500 {
			t.Errorf("shard %d got %d of 80000 keys; want about 10000", i, n)
		}
	}
	if Route(Router(1), "x") != 0 {
		t.Error("one shard: Route must be 0")
	}
}

func TestMalformed(t *testing.T) {
	good, _ := container(t, 3, []string{"a", "b"})
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := map[string][]byte{
		"short":       good[:10],
		"truncated":   good[:len(good)-1],
		"extra byte":  append(append([]byte(nil), good...), 0),
		"version":     mutate(func(b []byte) []byte { b[4] = 2; return b }),
		"scheme":      mutate(func(b []byte) []byte { b[5] = 9; return b }),
		"reserved":    mutate(func(b []byte) []byte { b[12] = 1; return b }),
		"one shard":   mutate(func(b []byte) []byte { b[8] = 1; return b }),
		"huge shards": mutate(func(b []byte) []byte { b[11] = 0xff; return b }),
		"bad length":  mutate(func(b []byte) []byte { b[24]++; return b }),
		"payload bit": mutate(func(b []byte) []byte { b[len(b)-20] ^= 1; return b }),
	}
	for name, data := range tests {
		if _, err := Load(data, 1<<20); err == nil {
			t.Errorf("%s: Load succeeded; want an error", name)
		}
	}
	if _, err := Load(mutate(func(b []byte) []byte { b[len(b)-20] ^= 1; return b }), 1<<20); !errors.Is(err, bloom.ErrChecksum) {
		t.Errorf("flipped payload bit: got %v; want ErrChecksum", err)
	}
}

// routerGolden is testdata/routers.json: the router record of a container
// of 2 to 8 shards, for the JavaScript tests that build containers as the
// Worker does (the npm module makes filters of seed 0 only).
const routerGolden = "testdata/routers.json"

type goldenRouters struct {
	About   string         `json:"about"`
	Routers map[int][]byte `json:"routers"` // by number of shards
}

func TestRouterGolden(t *testing.T) {
	want := goldenRouters{
		About:   "Written by snapshot's TestRouterGolden (UPDATE_GOLDEN=1 regenerates it); read by js/test/helpers.js. The container: worker/README.md.",
		Routers: map[int][]byte{},
	}
	for shards := 2; shards <= 8; shards++ {
		b, err := Router(shards).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		want.Routers[shards] = b
	}
	checkGolden(t, routerGolden, want)
}
