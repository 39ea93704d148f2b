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
	{"n=1M", 1_000_000},
	{"n=10M", 10_000_000},
}

// A filter is one library's filter made for n keys at fpRate. Each function
// runs a whole pass over a corpus, so the timed loops call the library
// directly, not through an interface or a function value per key.
type filter struct {
	add   func(keys *corpus) (fresh int) // adds every key; fresh counts Adds that reported a new key
	has   func(keys *corpus) (hits int)  // counts the keys reported present
	clear func()
	bits  uint64
	// wantFPR is the false-positive rate at n keys that the library sized
	// the filter for: fpRate, except that blobloom.NewOptimized rounds up
	// to 11 bits a key and predicts 0.63% with its own model.
	wantFPR float64
}

// libs are the filters compared, edgebloom first.
var libs = []struct {
	name    string
	addOnly bool // another Add of a library already listed, left out of Has
	make    func(n int) filter
}{
	{"edgebloom", false, newEdgebloom},
	{"bitsandblooms", false, newBitsAndBlooms},
	// TestAndAdd reports whether the key was present, as edgebloom's Add
	// does; it always writes all k bits, where Add tests first.
	{"bitsandblooms.TestAndAdd", true, newBitsAndBloomsTestAndAdd},
	{"blobloom", false, newBlobloom},
}

// each calls fn on every key of c and counts the trues. It and the function
// literals passed to it inline, so each library's Add or Has is called
// directly, as in user code (a method value such as f.Has would be called
// through a pointer).
func each(c *corpus, fn func(key []byte) bool) (trues int) {
	start := uint32(0)
	for _, end := range c.end {
		if fn(c.data[start:end]) {
			trues++
		}
		start = end
	}
	return trues
}

func newEdgebloom(n int) filter {
	f, err := bloom.New(uint64(n), fpRate)
	if err != nil {
		panic(err)
	}
	return filter{
		add:     func(c *corpus) int { return each(c, func(k []byte) bool { return f.Add(k) }) },
		has:     func(c *corpus) int { return each(c, func(k []byte) bool { return f.Has(k) }) },
		clear:   f.Clear,
		bits:    f.NumBits(),
		wantFPR: fpRate,
	}
}

func newBitsAndBlooms(n int) filter { return bitsAndBlooms(n, false) }

func newBitsAndBloomsTestAndAdd(n int) filter { return bitsAndBlooms(n, true) }

func bitsAndBlooms(n int, testAndAdd bool) filter {
	f := bitsandblooms.NewWithEstimates(uint(n), fpRate)
	add := func(c *corpus) int { return each(c, func(k []byte) bool { f.Add(k); return false }) }
	if testAndAdd {
		add = func(c *corpus) int { return each(c, func(k []byte) bool { return !f.TestAndAdd(k) }) }
	}
	return filter{
		add:     add,
		has:     func(c *corpus) int { return each(c, func(k []byte) bool { return f.Test(k) }) },
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
		add:     func(c *corpus) int { return each(c, func(k []byte) bool { f.Add(xxhash.Sum64(k)); return false }) },
		has:     func(c *corpus) int { return each(c, func(k []byte) bool { return f.Has(xxhash.Sum64(k)) }) },
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

// forEach runs bench for every size and library, as sub-benchmarks named
// n=<size>/lib=<library> for benchstat. Making the keys is not timed.
func forEach(b *testing.B, withAddOnly bool, bench func(b *testing.B, f filter, n int)) {
	for _, size := range sizes {
		b.Run(size.name, func(b *testing.B) {
			presentKeys(size.n) // make the corpus outside the timed sub-benchmarks
			absentKeys()
			for _, lib := range libs {
				if lib.addOnly && !withAddOnly {
					continue
				}
				b.Run("lib="+lib.name, func(b *testing.B) { bench(b, lib.make(size.n), size.n) })
			}
		})
	}
}

func benchmarkAdd(b *testing.B, f filter, n int) {
	keys := presentKeys(n)
	var cpu cpuTimer
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		f.clear() // also faults the bitset's pages in, so the timed adds don't
		b.StartTimer()
		cpu.start()
		f.add(keys)
		cpu.stop()
	}
	b.StopTimer()
	report(b, f, n, n, cpu)
}

func benchmarkHas(b *testing.B, f filter, n int) {
	f.clear()
	f.add(presentKeys(n))
	mix, present := probeMix(n)
	var cpu cpuTimer
	hits := 0
	b.ResetTimer()
	cpu.start()
	for range b.N {
		hits = f.has(mix)
	}
	cpu.stop()
	b.StopTimer()
	if hits < present {
		b.Fatalf("%d hits for %d present keys: false negatives", hits, present)
	}
	report(b, f, n, mix.len(), cpu)
}

// A cpuTimer adds up the process's CPU time over the timed parts of a
// benchmark. On a machine shared with other work, wall time (ns/op) also
// counts the time this process waits for a core; CPU time does not, so it
// varies less from run to run. Both are per key.
type cpuTimer struct{ total, started time.Duration }

func (t *cpuTimer) start() { t.started = processCPU() }
func (t *cpuTimer) stop()  { t.total += processCPU() - t.started }

// report sets ns/op to the time per key, from perOp keys per iteration, and
// reports the CPU time per key, the false-positive rate measured on
// never-added keys and the bits per key.
func report(b *testing.B, f filter, n, perOp int, cpu cpuTimer) {
	keys := float64(b.N) * float64(perOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/keys, "ns/op")
	if cpu.total > 0 {
		b.ReportMetric(float64(cpu.total.Nanoseconds())/keys, "cpu-ns/op")
	}
	b.ReportMetric(measureFPR(f), "fpr")
	b.ReportMetric(float64(f.bits)/float64(n), "bits/key")
}

// measureFPR returns the fraction of never-added keys that f reports present.
func measureFPR(f filter) float64 {
	absent := absentKeys()
	return float64(f.has(absent)) / float64(absent.len())
}
