package bench

import (
	"flag"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
)

var breakdownPasses = flag.Int("breakdown", 0, "TestBlockedBreakdown: number of interleaved passes (0 skips it)")

// TestBlockedBreakdown splits the time a key of the split-block filter's Add
// and Has into what every filter pays and what is its own, by timing in
// interleaved passes over the same keys:
//
//   - touch: read the first and last byte of every key (the key's memory);
//   - hash: XXH64 of every key (its memory and the hash);
//   - index: the hash and the block index, without touching the filter;
//   - Add, Has: the filter's AddString and HasString.
//
// For Has the steps run over the probe mix. Run it with
//
//	go test -run TestBlockedBreakdown -breakdown 5 -timeout 0 -v
func TestBlockedBreakdown(t *testing.T) {
	if *breakdownPasses <= 0 {
		t.Skip("set -breakdown to run")
	}
	var sink uint64
	eachSelected(func(kind urlKind, size string, n int) {
		keys, _, mix, _ := keySets(kind, n)
		f, err := bloom.NewBlocked(uint64(n), fpRate)
		if err != nil {
			t.Fatal(err)
		}
		blocks := f.NumBlocks()
		wall, cpu := map[string][]float64{}, map[string][]float64{}
		steps := []struct {
			name string
			keys []string
			run  func(keys []string) uint64
		}{
			{"touch/add", keys.keys, touch},
			{"hash/add", keys.keys, hashAll},
			{"index/add", keys.keys, func(k []string) uint64 { return indexAll(k, blocks) }},
			{"Add", keys.keys, func(k []string) uint64 {
				f.Clear()
				var n uint64
				for _, key := range k {
					if f.AddString(key) {
						n++
					}
				}
				return n
			}},
			{"touch/has", mix.keys, touch},
			{"hash/has", mix.keys, hashAll},
			{"index/has", mix.keys, func(k []string) uint64 { return indexAll(k, blocks) }},
			{"Has", mix.keys, func(k []string) uint64 {
				var n uint64
				for _, key := range k {
					if f.HasString(key) {
						n++
					}
				}
				return n
			}},
		}
		steps[3].run(keys.keys) // Has probes a full filter; Add fills it again
		for pass := range *breakdownPasses {
			for j := range steps {
				s := steps[(j+pass)%len(steps)]
				runtime.GC()
				cpu0, t0 := processCPU(), time.Now()
				sink += s.run(s.keys)
				keys := float64(len(s.keys))
				wall[s.name] = append(wall[s.name], float64(time.Since(t0).Nanoseconds())/keys)
				cpu[s.name] = append(cpu[s.name], float64((processCPU()-cpu0).Nanoseconds())/keys)
			}
		}
		for _, clock := range []struct {
			name  string
			times map[string][]float64
		}{{"CPU", cpu}, {"wall", wall}} {
			fmt.Printf("\ncorpus %s, n=%s: median ns per key (%s time) of %d passes\n\n", kind.name, size, clock.name, *breakdownPasses)
			fmt.Println("| op | touch the key | + XXH64 | + block index | whole op | the filter's own share |")
			fmt.Println("|---|--:|--:|--:|--:|--:|")
			for _, op := range []string{"Add", "Has"} {
				o := strings.ToLower(op)
				whole, hash := median(clock.times[op]), median(clock.times["hash/"+o])
				fmt.Printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", op,
					median(clock.times["touch/"+o]), hash, median(clock.times["index/"+o]), whole, whole-hash)
			}
		}
	})
	if sink == 0 {
		t.Log("no keys")
	}
}

// touch reads the first and last byte of every key.
func touch(keys []string) (sum uint64) {
	for _, k := range keys {
		if len(k) > 0 {
			sum += uint64(k[0]) + uint64(k[len(k)-1])
		}
	}
	return sum
}

func hashAll(keys []string) (sum uint64) {
	for _, k := range keys {
		sum += xxhash.Sum64String(k)
	}
	return sum
}

// indexAll computes the block of every key as the split-block filter does,
// without reading the filter.
func indexAll(keys []string, blocks uint64) (sum uint64) {
	for _, k := range keys {
		sum += (xxhash.Sum64String(k) >> 32) * blocks >> 32
	}
	return sum
}
