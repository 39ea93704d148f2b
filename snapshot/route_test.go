package snapshot

import (
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
)

// The routing hash is XXH64 as xxhash computes it, on every length up to
// 300 and several seeds, and Route is router.Locations(key)[0].
func TestRouteHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for _, seed := range []uint64{0, 1, RouteSeed, 1<<64 - 1} {
		for n := 0; n <= len(buf); n++ {
			var d xxhash.Digest
			d.ResetWithSeed(seed)
			d.Write(buf[:n])
			if got, want := routeSumBytes(buf[:n], seed), d.Sum64(); got != want || routeSum(string(buf[:n]), seed) != want {
				t.Fatalf("seed %#x, %d bytes: %#x; xxhash says %#x", seed, n, got, want)
			}
		}
	}
	for _, s := range []int{1, 2, 3, 4, 64, MaxShards} {
		r := Router(s)
		other, _ := bloom.NewWithSeed(uint64(s), 3, 12345)
		for _, k := range append(keys(0, 200), "", "café", "😀") {
			if Route(r, k) != int(r.Locations([]byte(k))[0]) || Route(other, k) != int(other.Locations([]byte(k))[0]) {
				t.Fatalf("%d shards: Route(%q) is not the router's first location", s, k)
			}
		}
	}
}
