//go:build !(js && wasm)

package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// The worst merge the API allows: a delta over the most checkpoints a
// filter keeps (63 spans), each consecutive delta as dense as a shard
// sends (every shard's record at its limit, abi.DeltaLimit: every 8th bit,
// a new eighth each span). What the merge allocates in all, which bounds
// what it holds at once, stays under its weight (deltaWeight), which is
// under the front's budget: the weight says what the request holds.
func TestMergedDeltaHoldsWhatItWeighs(t *testing.T) {
	p := filterParams{Capacity: 100_000, ErrorRate: 0.01, Shards: 4, Generation: 1}
	m, k, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	payload := int((m + 7) / 8)
	name := "merge-weight"
	spans := uint64(keptCheckpoints - 1)
	for n := uint64(1); n <= spans; n++ {
		d := &snapshot.Delta{Generation: p.Generation, M: m, K: uint32(k), Shards: uint32(p.Shards)}
		for sh := range p.Shards {
			var pos []uint64
			for j := n % 8; j < m; j += 8 {
				pos = append(pos, j)
			}
			d.Records = append(d.Records, snapshot.DeltaRecord{Shard: uint32(sh), Epoch: 1, From: n, To: n + 1, Count: n, Positions: pos})
		}
		body := snapshot.EncodeDelta(d)
		if per := (len(body) - abi.DeltaHeader - abi.DeltaTrailer) / p.Shards; per > abi.DeltaRecordHeader+2+abi.DeltaLimit(payload) {
			t.Fatalf("span %d: a record of %d bytes is past what a shard sends", n, per)
		}
		header := http.Header{"Cache-Control": {"public, max-age=3600"}}
		cachePut(context.Background(), cacheKey(name, p.Generation, fmt.Sprintf("%d/delta?from=%d", n+1, n)), header, body)
	}
	weight := deltaWeight(p, spans)
	if weight > heavyBudget {
		t.Fatalf("the weight %d is over the budget %d", weight, heavyBudget)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := (&Server{}).mergedDelta(context.Background(), name, p.Generation, 1, spans+1)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("merge of %d spans of %d shards of %d bits: %d bytes allocated in all; weight %d; budget %d", spans, p.Shards, m, allocated, weight, heavyBudget)
	if allocated > weight {
		t.Fatalf("the merge allocated %d bytes, over its weight %d", allocated, weight)
	}
	// And it is the merged delta: every bit of every shard, from 1 to 64.
	d, err := snapshot.DecodeDelta(out)
	if err != nil || len(d.Records) != p.Shards {
		t.Fatalf("the merged delta: %v", err)
	}
	for _, rec := range d.Records {
		if rec.From != 1 || rec.To != spans+1 || uint64(len(rec.Positions)) != m {
			t.Fatalf("shard %d: from %d to %d, %d positions; want 1 to %d, %d", rec.Shard, rec.From, rec.To, len(rec.Positions), spans+1, m)
		}
	}
}
