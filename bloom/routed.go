package bloom

import "math/bits"

// routed is a sharded filter as the npm module's engine holds it: its
// shards, and the router's seed, by which key goes to shard
// floor(XXH64(key, route) · len(fs) / 2^64), the router's first location of
// key (package snapshot's routing). A batch hashes a group of keys twice,
// once to route them and once for their shards, then probes each shard's
// keys of the group together (routed_wasm.go).
type routed struct {
	fs    []*Filter
	route uint64 // the router's seed
	seed  uint64 // the shards' seed, the same for every shard
}

// route is engine.Route; engine.Batch takes what it returns.
func route(r, f any) any {
	g, _ := f.(*Filter)
	rt, _ := r.(*routed)
	switch {
	case g == nil:
		return nil
	case rt == nil:
		return &routed{route: g.seed}
	case len(rt.fs) > 0 && g.seed != rt.seed:
		return nil
	}
	rt.fs, rt.seed = append(rt.fs, g), g.seed
	return rt
}

// shard returns the index of the shard of the key whose routing digest is h.
func (r *routed) shard(h uint64) uint32 {
	s, _ := bits.Mul64(h, uint64(len(r.fs)))
	return uint32(s)
}
