package bench

import (
	"testing"
	"time"

	bitsandblooms "github.com/bits-and-blooms/bloom/v3"
	"github.com/cespare/xxhash/v2"
	"github.com/edgebloom/edgebloom/bloom"
	"github.com/greatroar/blobloom"
)

// fpRate is the target false-positive rate of every filter here.
const fpRate = 0.01

var sizes = []struct {
	name string
	n    int
}{
	{"1M", 1_000_000},
	{"10M", 10_000_000},
}

// A filter is one library's filter made for n keys at fpRate. Each function
// runs a whole pass over a corpus, so the timed loops call the library
// directly, not through an interface or a function value per key.
type filter struct {
	add   func(keys []string) (fresh int) // adds every key; fresh counts Adds that reported a new key
	has   func(keys []string) (hits int)  // counts the keys reported present
	clear func()
	bits  uint64
	// wantFPR is the false-positive rate at n keys that the library sized
	// the filter for: fpRate, except that blobloom.NewOptimized rounds up
	// to 11 bits a key and predicts 0.63% with its own model.
	wantFPR float64
}

// A lib is one row of the comparison.
type lib struct {
	name string
	// addOnly marks another Add of a library already listed: it is left out
	// of Has and of the FPR check.
	addOnly bool
	make    func(n int) filter
}

// libs are the filters compared, edgebloom first. Every library is called
// through its string API where it has one, with the keys as the crawler
// holds them; bits-and-blooms' AddString and TestString convert to []byte,
// which copies keys longer than 32 bytes. To compare another filter, add a
// row here: every benchmark, TestFPR and TestSideBySide pick it up.
var libs = []lib{
	{"edgebloom", false, newEdgebloom},
	// SyncFilter: the same bits by atomic OR, for concurrent writers (run
	// here by one).
	{"edgebloom.Sync", false, newEdgebloomSync},
	{"bitsandblooms", false, newBitsAndBlooms},
	// TestAndAdd reports whether the key was present, as edgebloom's Add
	// does; it always writes all k bits, where Add tests first.
	{"bitsandblooms.TestAndAdd", true, newBitsAndBloomsTestAndAdd},
	{"blobloom", false, newBlobloom},
	// The split-block kind (Parquet's): one cache line a key, like
	// blobloom's blocks, and sized from its own rate, 10.8 bits a key.
	{"edgebloom.Blocked", false, newEdgebloomBlocked},
	// The batch calls, batchSize keys a call (a page's links): the same
	// filters, their cache misses overlapped. The peers have no batch call.
	{"edgebloom.Many", false, newEdgebloomMany},
	{"edgebloom.Blocked.Many", false, newEdgebloomBlockedMany},
}

// baseline is the library every other is compared with in the tables.
const baseline = "bitsandblooms"

// each calls fn on every key and counts the trues. It and the function
// literals passed to it inline, so each library's Add or Has is called
// directly, as in user code (a method value such as f.Has would be called
// through a pointer).
func each(keys []string, fn func(key string) bool) (trues int) {
	for _, k := range keys {
		if fn(k) {
			trues++
		}
	}
	return trues
}

// batchSize is the number of keys of each AddManyString and HasManyString
// call: a crawled page's links, tens to hundreds.
const batchSize = 100

// batches calls fn on keys batchSize at a time and counts the trues.
func batches(keys []string, fn func(keys []string, dst []bool) []bool) (trues int) {
	dst := make([]bool, 0, batchSize)
	for i := 0; i < len(keys); i += batchSize {
		dst = fn(keys[i:min(i+batchSize, len(keys))], dst[:0])
		for _, b := range dst {
			if b {
				trues++
			}
		}
	}
	return trues
}

// A batcher is a filter with string batches, run through the interface:
// one indirect call a batch, not a key.
type batcher interface {
	AddManyString(keys []string, dst []bool) []bool
	HasManyString(keys []string, dst []bool) []bool
	Clear()
	NumBits() uint64
}

func manyFilter(f batcher, wantFPR float64) filter {
	return filter{
		add:     func(keys []string) int { return batches(keys, f.AddManyString) },
		has:     func(keys []string) int { return batches(keys, f.HasManyString) },
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: wantFPR,
	}
}

func newEdgebloomMany(n int) filter {
	f, err := bloom.New(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return manyFilter(f, fpRate)
}

func newEdgebloomBlockedMany(n int) filter {
	f, err := bloom.NewBlocked(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return manyFilter(f, bloom.EstimateBlockedFPR(f.NumBlocks(), uint64(n)))
}

func newEdgebloom(n int) filter {
	f, err := bloom.New(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return filter{
		add:     func(keys []string) int { return each(keys, func(k string) bool { return f.AddString(k) }) },
		has:     func(keys []string) int { return each(keys, func(k string) bool { return f.HasString(k) }) },
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: fpRate,
	}
}

// newEdgebloomBlocked expects the rate that OptimalBlocks sized for, 0.9p
// (the margin keeps a real filter at capacity within [0.8p, p]).
func newEdgebloomBlocked(n int) filter {
	f, err := bloom.NewBlocked(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return filter{
		add:     func(keys []string) int { return each(keys, func(k string) bool { return f.AddString(k) }) },
		has:     func(keys []string) int { return each(keys, func(k string) bool { return f.HasString(k) }) },
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: bloom.EstimateBlockedFPR(f.NumBlocks(), uint64(n)),
	}
}

// newEdgebloomSync repeats newEdgebloom for the other type rather than
// sharing a generic version: methods of a type parameter are called through
// a dictionary, an indirect call per key that user code does not pay.
func newEdgebloomSync(n int) filter {
	f, err := bloom.NewSync(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return filter{
		add:     func(keys []string) int { return each(keys, func(k string) bool { return f.AddString(k) }) },
		has:     func(keys []string) int { return each(keys, func(k string) bool { return f.HasString(k) }) },
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: fpRate,
	}
}

func newBitsAndBlooms(n int) filter { return bitsAndBlooms(n, false) }

func newBitsAndBloomsTestAndAdd(n int) filter { return bitsAndBlooms(n, true) }

func bitsAndBlooms(n int, testAndAdd bool) filter {
	f := bitsandblooms.NewWithEstimates(uint(n), fpRate)
	add := func(keys []string) int { return each(keys, func(k string) bool { f.AddString(k); return false }) }
	if testAndAdd {
		add = func(keys []string) int { return each(keys, func(k string) bool { return !f.TestAndAddString(k) }) }
	}
	return filter{
		add:     add,
		has:     func(keys []string) int { return each(keys, func(k string) bool { return f.TestString(k) }) },
		clear:   func() { f.ClearAll() },
		bits:    uint64(f.Cap()),
		wantFPR: fpRate,
	}
}

// newBlobloom hashes keys with XXH64, as blobloom's documentation suggests
// and as edgebloom does.
func newBlobloom(n int) filter {
	f := blobloom.NewOptimized(blobloom.Config{Capacity: uint64(n), FPRate: fpRate})
	return filter{
		add: func(keys []string) int {
			return each(keys, func(k string) bool { f.Add(xxhash.Sum64String(k)); return false })
		},
		has: func(keys []string) int {
			return each(keys, func(k string) bool { return f.Has(xxhash.Sum64String(k)) })
		},
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: f.FPRate(uint64(n)),
	}
}

// BenchmarkAdd fills an empty filter with n distinct URLs. ns/op is per key:
// one iteration adds all n keys and its time is divided by n.
func BenchmarkAdd(b *testing.B) { forEach(b, true, benchmarkAdd) }

// BenchmarkHas probes a filter holding n URLs with a mix of 1M keys, half of
// them present and half never added, in random order. ns/op is per probe.
func BenchmarkHas(b *testing.B) { forEach(b, false, benchmarkHas) }

// forEach runs bench for every corpus, size and library, as sub-benchmarks
// named corpus=<kind>/n=<size>/lib=<library> for benchstat. Making the keys
// is not timed.
func forEach(b *testing.B, withAddOnly bool, bench func(b *testing.B, f filter, kind urlKind, n int)) {
	for _, kind := range urlKinds {
		for _, size := range sizes {
			b.Run("corpus="+kind.name+"/n="+size.name, func(b *testing.B) {
				keySets(kind, size.n) // make the corpus outside the timed sub-benchmarks
				for _, lib := range libs {
					if lib.addOnly && !withAddOnly {
						continue
					}
					b.Run("lib="+lib.name, func(b *testing.B) { bench(b, lib.make(size.n), kind, size.n) })
				}
			})
		}
	}
}

func benchmarkAdd(b *testing.B, f filter, kind urlKind, n int) {
	keys, absent, _, _ := keySets(kind, n)
	var cpu cpuTimer
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		f.clear() // also faults the bitset's pages in, so the timed adds don't
		b.StartTimer()
		cpu.start()
		f.add(keys.keys)
		cpu.stop()
	}
	b.StopTimer()
	report(b, f, n, n, cpu, absent)
}

func benchmarkHas(b *testing.B, f filter, kind urlKind, n int) {
	keys, absent, mix, present := keySets(kind, n)
	f.clear()
	f.add(keys.keys)
	var cpu cpuTimer
	hits := 0
	b.ResetTimer()
	cpu.start()
	for range b.N {
		hits = f.has(mix.keys)
	}
	cpu.stop()
	b.StopTimer()
	if hits < present {
		b.Fatalf("%d hits for %d present keys: false negatives", hits, present)
	}
	report(b, f, n, mix.len(), cpu, absent)
}

// A cpuTimer adds up the process's CPU time over the timed parts of a
// benchmark. On a machine shared with other work, wall time (ns/op) also
// counts the time this process waits for a core; CPU time does not, so it
// varies less from run to run. Both are per key.
type cpuTimer struct{ total, started time.Duration }

func (t *cpuTimer) start() { t.started = processCPU() }
func (t *cpuTimer) stop()  { t.total += processCPU() - t.started }

// report sets ns/op to the time per key, from perOp keys per iteration, and
// reports the CPU time per key, the false-positive rate measured on the
// never-added keys and the bits per key.
func report(b *testing.B, f filter, n, perOp int, cpu cpuTimer, absent *corpus) {
	keys := float64(b.N) * float64(perOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/keys, "ns/op")
	if cpu.total > 0 {
		b.ReportMetric(float64(cpu.total.Nanoseconds())/keys, "cpu-ns/op")
	}
	b.ReportMetric(measureFPR(f, absent), "fpr")
	b.ReportMetric(float64(f.bits)/float64(n), "bits/key")
}

// measureFPR returns the fraction of never-added keys that f reports present.
func measureFPR(f filter, absent *corpus) float64 {
	return float64(f.has(absent.keys)) / float64(absent.len())
}
