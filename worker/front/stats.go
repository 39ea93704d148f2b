// GET of a filter: its parameters, each shard's statistics and their
// totals. Shards are sized alike and a key goes to one of them, so the
// totals are sums, and the filter's estimated error rate is the shards'
// mean.

package main

import (
	"context"
	"math"
	"net/http"
)

func (s *Server) shardStats(ctx context.Context, name string, p filterParams) ([]shardStats, error) {
	stats := make([]shardStats, p.Shards)
	err := fanOut(p.Shards, func(sh int) error {
		res, err := s.call(ctx, shardObject(name, sh), "GET", "/stats", shardParamsOf(name, p, sh), nil)
		if err != nil {
			return err
		}
		return decodeResponse(res, &stats[sh])
	})
	return stats, err
}

func (s *Server) stats(ctx context.Context, w http.ResponseWriter, name string) error {
	return s.withParams(ctx, name, func(p filterParams) error {
		stats, err := s.shardStats(ctx, name, p)
		if err != nil {
			return err
		}
		writeStats(w, name, p, stats)
		return nil
	})
}

// writeStats writes a filter's parameters, its totals and each shard's
// statistics.
func writeStats(w http.ResponseWriter, name string, p filterParams, stats []shardStats) {
	type shardOut struct {
		Index    int    `json:"index"`
		Capacity uint64 `json:"capacity"`
		shardStats
	}
	var total shardStats
	var est float64
	per := make([]shardOut, len(stats))
	for i, st := range stats {
		per[i] = shardOut{Index: i, Capacity: shardCapacity(p), shardStats: st}
		total.Bits += st.Bits
		total.Hashes = st.Hashes
		total.Count += st.Count
		total.SetBits += st.SetBits
		total.ByteLength += st.ByteLength
		if st.EstimatedCount == nil {
			est = math.Inf(1)
		} else {
			est += *st.EstimatedCount
		}
		// A key never added goes to one shard, each as likely: the filter's
		// false-positive rate is the mean of the shards'.
		total.EstimatedErrorRate += st.EstimatedErrorRate / float64(len(stats))
	}
	if !math.IsInf(est, 1) {
		total.EstimatedCount = &est
	}
	if total.Bits > 0 {
		total.FillRatio = float64(total.SetBits) / float64(total.Bits)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name": name, "capacity": p.Capacity, "errorRate": p.ErrorRate, "shards": p.Shards, "canonicalize": p.Canonicalize,
		"total": total, "perShard": per,
	})
}
