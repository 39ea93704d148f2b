//go:build workerd

package client_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/snapshot"
)

// TestServiceMerge: a filter built offline, routed as the service routes,
// merged as a delta of positions, is the service's snapshot byte for byte;
// sent again it sets nothing; a copy synced before gets the bits; a delta of
// another generation is ErrConflict.
func TestServiceMerge(t *testing.T) {
	s := serviceOf(t)
	c := s.client(t)
	ctx := context.Background()
	const name = "go-merge"
	params := client.Params{Capacity: 20_000, ErrorRate: 0.01, Shards: 3}
	f, err := c.Create(ctx, name, params)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := c.NewCopy(name, client.CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	// Built offline: each key in its shard.
	offline := &snapshot.Sharded{Router: snapshot.Router(params.Shards)}
	for range params.Shards {
		sh, err := bloom.New(f.ShardCapacity, params.ErrorRate) // seed 0, the shard's m and k
		if err == nil && (sh.NumBits() != f.ShardBits || sh.NumHashes() != f.Hashes) {
			err = errors.New("another m or k than the service's shards")
		}
		if err != nil {
			t.Fatal(err)
		}
		offline.Shards = append(offline.Shards, sh)
	}
	keys := urls("merged", 1_000) // a tenth of the capacity at most: a copy then gets a delta
	positions := make([][]uint64, params.Shards)
	for _, k := range keys {
		i := snapshot.Route(offline.Router, k)
		offline.Shards[i].AddString(k)
		positions[i] = append(positions[i], offline.Shards[i].Locations([]byte(k))...)
	}
	d := &snapshot.Delta{M: f.ShardBits, K: f.Hashes, Shards: uint32(params.Shards)}
	for i, p := range positions {
		slices.Sort(p)
		d.Records = append(d.Records, snapshot.DeltaRecord{Shard: uint32(i), To: 1, Count: offline.Shards[i].Count(), Positions: slices.Compact(p)})
	}
	m, err := c.Merge(ctx, name, snapshot.EncodeDelta(d))
	if err != nil || m.Set == 0 || len(m.Shards) != params.Shards {
		t.Fatalf("Merge: %+v, %v", m, err)
	}
	want, _ := offline.MarshalBinary()
	var got bytes.Buffer
	if _, err := c.WriteSnapshot(ctx, name, &got); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the service's snapshot is not the filter built offline (%v)", err)
	}
	again, err := c.Merge(ctx, name, snapshot.EncodeDelta(d))
	if err != nil || again.Set != 0 {
		t.Fatalf("the same merge again: %+v, %v; want nothing set", again, err)
	}
	if r, err := cp.Sync(ctx); err != nil || r.Snapshot || !holdsAll(cp, keys) {
		t.Fatalf("a copy synced before the merge: %+v, %v; want the merged keys through a delta", r, err)
	}
	d.Generation = m.Generation + 1
	if _, err := c.Merge(ctx, name, snapshot.EncodeDelta(d)); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("a delta of another generation: %v; want ErrConflict", err)
	}
}
