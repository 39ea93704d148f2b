package snapshot

import (
	"fmt"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// The batches of a 4-shard Sharded beside one bloom.Filter of the same
// capacity, 1M keys at 1 %, on the same 100,000 URLs (half of them added):
//
//	go test -run '^$' -bench Batch -benchtime 20x ./snapshot/
//
// Figures: docs/go.md ("Sharded filters").

const benchCapacity = 1_000_000

// A filter is what the benchmarks compare: a bloom.Filter or a Sharded.
type benchFilter interface {
	AddString(string) bool
	HasString(string) bool
	AddManyString([]string, []bool) []bool
	HasManyString([]string, []bool) []bool
	Clear()
}

func benchFilters(b *testing.B) map[string]benchFilter {
	one, err := bloom.New(benchCapacity, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]benchFilter{"filter": one, "sharded-4": newSharded(b, benchCapacity, 4)}
}

func benchKeys(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://example.com/page/%d?ref=%d", from+i, i%97)
	}
	return out
}

// timed runs the benchmark's loop, do, and reports the wall time and the
// CPU time a key of the n each call takes.
func timed(b *testing.B, n int, do func()) {
	cpu := cpuTime()
	b.ResetTimer()
	for range b.N {
		do()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
	if cpu > 0 {
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*n), "cpu-ns/key")
	}
}

func BenchmarkBatch(b *testing.B) {
	filled := benchKeys(0, benchCapacity)
	probe := append(benchKeys(benchCapacity-50_000, 50_000), benchKeys(2*benchCapacity, 50_000)...)
	fresh := benchKeys(3*benchCapacity, len(probe))
	for _, name := range []string{"filter", "sharded-4"} {
		f := benchFilters(b)[name]
		f.AddManyString(filled, nil)
		dst := make([]bool, 0, len(probe))
		b.Run("HasMany/"+name, func(b *testing.B) {
			timed(b, len(probe), func() { dst = f.HasManyString(probe, dst[:0]) })
		})
		b.Run("Has/"+name, func(b *testing.B) {
			timed(b, len(probe), func() {
				for i, k := range probe {
					dst[i] = f.HasString(k)
				}
			})
		})
		f.Clear()
		f.AddManyString(filled[:benchCapacity/2], nil)
		b.Run("AddMany/"+name, func(b *testing.B) {
			// The same fresh keys each time: the later passes find them
			// present, as a crawler's batch mostly does.
			timed(b, len(fresh), func() { dst = f.AddManyString(fresh, dst[:0]) })
		})
	}
}
