//go:build linux

package bench

import (
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
	"github.com/greatroar/blobloom"
)

var singleRounds = flag.Int("single", 0, "TestSingleKey: number of rounds (0 skips it)")

// singleChunk is the keys each library takes in turn within a round.
const singleChunk = 20_000

// TestSingleKey compares the split-block kind's single-key AddString and
// HasString with blobloom's Add and Has (keys hashed by xxhash.Sum64String)
// more finely interleaved than TestSideBySide: the two take turns every
// singleChunk keys, the first of each turn alternating, and each turn is
// timed by the thread's own CPU time, so a burst of load from elsewhere
// falls on both alike. A round adds every key to emptied filters, then
// probes the mix; the table shows the median round.
//
//	go test -run TestSingleKey -single 7 -sizes 1M,10M -corpora crawl,intl -timeout 0 -v
func TestSingleKey(t *testing.T) {
	if *singleRounds <= 0 {
		t.Skip("set -single to run")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	eachSelected(func(kind urlKind, size string, n int) {
		keys, _, mix, _ := keySets(kind, n)
		eb, err := bloom.NewBlocked(uint64(n), fpRate)
		if err != nil {
			t.Fatal(err)
		}
		bb := blobloom.NewOptimized(blobloom.Config{Capacity: uint64(n), FPRate: fpRate})
		ebAdd := func(k []string) (n int) {
			for _, s := range k {
				if eb.AddString(s) {
					n++
				}
			}
			return n
		}
		bbAdd := func(k []string) (n int) {
			for _, s := range k {
				bb.Add(xxhash.Sum64String(s))
			}
			return len(k)
		}
		ebHas := func(k []string) (n int) {
			for _, s := range k {
				if eb.HasString(s) {
					n++
				}
			}
			return n
		}
		bbHas := func(k []string) (n int) {
			for _, s := range k {
				if bb.Has(xxhash.Sum64String(s)) {
					n++
				}
			}
			return n
		}
		var res [2][2][]float64 // [add, has][edgebloom, blobloom], ns a key
		for round := range *singleRounds {
			eb.Clear()
			bb.Clear()
			runtime.GC()
			for op, fs := range [2][2]func([]string) int{{ebAdd, bbAdd}, {ebHas, bbHas}} {
				k := keys.keys
				if op == 1 {
					k = mix.keys
				}
				var total [2]time.Duration
				for i, turn := 0, round; i < len(k); i, turn = i+singleChunk, turn+1 {
					c := k[i:min(i+singleChunk, len(k))]
					for j := range 2 {
						lib := (j + turn) % 2
						t0 := threadCPU()
						fs[lib](c)
						total[lib] += threadCPU() - t0
					}
				}
				for lib := range 2 {
					res[op][lib] = append(res[op][lib], float64(total[lib].Nanoseconds())/float64(len(k)))
				}
			}
		}
		for op, name := range []string{"Add", "Has"} {
			e, b := median(res[op][0]), median(res[op][1])
			fmt.Printf("%s %s %s: edgebloom.Blocked %.1f ns a key, blobloom %.1f: %.2fx blobloom (thread CPU, median of %d rounds)\n",
				kind.name, size, name, e, b, b/e, *singleRounds)
		}
	})
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
