package bench

import (
	"cmp"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

var (
	floor       = flag.Int("floor", 0, "TestFloor: number of passes (0 skips it)")
	floorCorpus = flag.String("floor.corpus", "crawl", "TestFloor: the corpus")
	floorSize   = flag.String("floor.n", "1M", "TestFloor: the number of keys, from "+sizeNames())
)

// TestFloor measures what every library pays before its own work: reading
// and hashing keys held as separate strings in random order. Each line is
// the CPU time per key of one loop over the keys of a corpus (-floor.corpus,
// -floor.n: by default the 1M keys of crawl), median of -floor passes,
// interleaved:
//
//   - byte: read one byte of each key. The loads do not depend on each
//     other, so the CPU has many cache misses in flight at once.
//   - xxh64/8, xxh64/32, xxh64: XXH64 of the first 8 or 32 bytes, or of the
//     whole key. The more work a key takes, the fewer keys' misses the CPU
//     overlaps: it only starts the next key's loads once they enter its
//     window of a few hundred instructions.
//   - xxh64 in address order: the whole key, the keys sorted by address, so
//     that their memory is read in order and prefetched.
//   - xxh64, 16 keys touched first: as a batch hashes, a byte at each end
//     of 16 keys read first (their misses together), then their hashes.
//   - edgebloom Add and Has: the filter's work added to the whole key's hash.
//   - edgebloom and edgebloom.Blocked AddMany and HasMany: the batch calls,
//     100 keys a call.
//
// Run it with
//
//	go test -run TestFloor -floor 7 -v
func TestFloor(t *testing.T) {
	if *floor <= 0 {
		t.Skip("set -floor to run")
	}
	kind, n := urlKinds[0], 0
	for _, k := range urlKinds {
		if k.name == *floorCorpus {
			kind = k
		}
	}
	for _, size := range sizes {
		if size.name == *floorSize {
			n = size.n
		}
	}
	if n == 0 {
		t.Fatalf("-floor.n %q: not one of %s", *floorSize, sizeNames())
	}
	keys, _, mix, _ := keySets(kind, n)
	sorted := slices.Clone(keys.keys)
	slices.SortFunc(sorted, func(a, b string) int {
		return cmp.Compare(uintptr(unsafe.Pointer(unsafe.StringData(a))), uintptr(unsafe.Pointer(unsafe.StringData(b))))
	})
	f := newEdgebloom(keys.len())
	many, blocked := newEdgebloomMany(keys.len()), newEdgebloomBlockedMany(keys.len())
	var sink uint64
	loops := []struct {
		name string
		keys []string
		fn   func(keys []string)
	}{
		{"byte", keys.keys, func(ks []string) {
			for _, k := range ks {
				sink += uint64(k[len(k)-1])
			}
		}},
		{"xxh64/8", keys.keys, func(ks []string) {
			for _, k := range ks {
				sink += xxhash.Sum64String(k[:8])
			}
		}},
		{"xxh64/32", keys.keys, func(ks []string) {
			for _, k := range ks {
				sink += xxhash.Sum64String(k[:32])
			}
		}},
		{"xxh64", keys.keys, func(ks []string) {
			for _, k := range ks {
				sink += xxhash.Sum64String(k)
			}
		}},
		{"xxh64 in address order", sorted, func(ks []string) {
			for _, k := range ks {
				sink += xxhash.Sum64String(k)
			}
		}},
		{"xxh64, 16 touched first", keys.keys, func(ks []string) {
			for i := 0; i < len(ks); i += 16 {
				g := ks[i:min(i+16, len(ks))]
				for _, k := range g {
					sink += uint64(k[0]) + uint64(k[len(k)-1])
				}
				for _, k := range g {
					sink += xxhash.Sum64String(k)
				}
			}
		}},
		{"edgebloom Add", keys.keys, func(ks []string) { f.clear(); f.add(ks) }},
		{"edgebloom AddMany", keys.keys, func(ks []string) { many.clear(); many.add(ks) }},
		{"edgebloom.Blocked AddMany", keys.keys, func(ks []string) { blocked.clear(); blocked.add(ks) }},
		{"xxh64 of the Has mix", mix.keys, func(ks []string) {
			for _, k := range ks {
				sink += xxhash.Sum64String(k)
			}
		}},
		{"edgebloom Has", mix.keys, func(ks []string) { f.has(ks) }},
		{"edgebloom HasMany", mix.keys, func(ks []string) { many.has(ks) }},
		{"edgebloom.Blocked HasMany", mix.keys, func(ks []string) { blocked.has(ks) }},
	}
	times := make([][]float64, len(loops))
	for pass := range *floor {
		for j := range loops {
			i := (j + pass) % len(loops)
			runtime.GC()
			c0 := processCPU()
			loops[i].fn(loops[i].keys)
			times[i] = append(times[i], float64((processCPU()-c0).Nanoseconds())/float64(len(loops[i].keys)))
		}
	}
	for i, l := range loops {
		fmt.Printf("%-24s %6.1f ns/key (CPU, median of %d)\n", l.name, median(times[i]), *floor)
	}
	_ = sink
}
