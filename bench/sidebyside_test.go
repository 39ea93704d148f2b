package bench

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	passes     = flag.Int("passes", 0, "TestSideBySide: number of interleaved passes (0 skips it)")
	sizeFlag   = flag.String("sizes", "1M,10M", "TestSideBySide: sizes to run, from "+sizeNames())
	corpusFlag = flag.String("corpora", "crawl,intl", "TestSideBySide: corpora to run")
	libFlag    = flag.String("libs", "", "TestSideBySide: regexp of the libraries to run (all when empty)")
)

// eachSelected calls fn for every corpus and size that -corpora and -sizes
// select.
func eachSelected(fn func(kind urlKind, size string, n int)) {
	for _, kind := range urlKinds {
		if !slices.Contains(strings.Split(*corpusFlag, ","), kind.name) {
			continue
		}
		for _, size := range sizes {
			if slices.Contains(strings.Split(*sizeFlag, ","), size.name) {
				fn(kind, size.name, size.n)
			}
		}
	}
}

func sizeNames() string {
	var s []string
	for _, size := range sizes {
		s = append(s, size.name)
	}
	return strings.Join(s, ",")
}

// A target is a speed-up over the baseline, or over another library (than),
// that a library must reach.
type target struct {
	lib, op, size string
	min           float64
	than          string // baseline when empty
}

// targets are checked and reported (not failed) at the end of
// TestSideBySide: the machine's load moves them.
var targets = []target{
	{"edgebloom", "Add", "1M", 1.2, ""},
	{"edgebloom", "Has", "1M", 1.2, ""},
	{"edgebloom", "Add", "10M", 1.5, ""},
	{"edgebloom", "Has", "10M", 1.3, ""},
	{"edgebloom.Blocked", "Add", "10M", 2, ""},
	{"edgebloom.Blocked", "Has", "10M", 2, ""},
	{"edgebloom.Blocked", "Add", "1M", 1, "blobloom"},
	{"edgebloom.Blocked", "Has", "1M", 1, "blobloom"},
	{"edgebloom.Blocked", "Add", "10M", 1, "blobloom"},
	{"edgebloom.Blocked", "Has", "10M", 1, "blobloom"},
	// The batch calls against the peers' single-key loops.
	{"edgebloom.Blocked.Many", "Add", "10M", 3, ""},
	{"edgebloom.Blocked.Many", "Has", "10M", 3, ""},
	{"edgebloom.Blocked.Many", "Add", "10M", 1.5, "blobloom"},
	{"edgebloom.Blocked.Many", "Has", "10M", 1.5, "blobloom"},
	{"edgebloom.Many", "Add", "10M", 2, ""},
	{"edgebloom.Many", "Has", "10M", 2, ""},
	{"edgebloom.Many", "Add", "1M", 1, ""},
	{"edgebloom.Many", "Has", "1M", 1, ""},
	{"edgebloom.Many", "Add", "1M", 1, "blobloom"},
	{"edgebloom.Many", "Has", "1M", 1, "blobloom"},
	{"edgebloom.Blocked.Many", "Add", "1M", 1, ""},
	{"edgebloom.Blocked.Many", "Has", "1M", 1, ""},
	{"edgebloom.Blocked.Many", "Add", "1M", 1, "blobloom"},
	{"edgebloom.Blocked.Many", "Has", "1M", 1, "blobloom"},
}

// TestSideBySide times every library on every corpus and size in one run,
// in interleaved passes: within a pass each library adds all n keys to its
// emptied filter and probes the mix, one library after the other, and the
// order rotates from pass to pass, so a burst of load from elsewhere falls
// on all of them alike. It prints the medians as Markdown tables, and each
// pass in benchstat's format. It fails when a library has a false negative
// or misses its false-positive rate by more than 10% (relative). Run it
// with
//
//	go test -run TestSideBySide -passes 7 -timeout 0 -v
func TestSideBySide(t *testing.T) {
	if *passes <= 0 {
		t.Skip("set -passes to run")
	}
	var only *regexp.Regexp
	if *libFlag != "" {
		only = regexp.MustCompile(*libFlag)
	}
	var run []lib
	for _, l := range libs {
		if only == nil || only.MatchString(l.name) {
			run = append(run, l)
		}
	}
	fmt.Printf("goos: %s\ngoarch: %s\n", runtime.GOOS, runtime.GOARCH)
	for _, kind := range urlKinds {
		if !slices.Contains(strings.Split(*corpusFlag, ","), kind.name) {
			continue
		}
		res := newResults(kind.name)
		for _, size := range sizes {
			if !slices.Contains(strings.Split(*sizeFlag, ","), size.name) {
				continue
			}
			sideBySide(t, kind, size.name, size.n, run, res)
		}
		res.print(run)
	}
}

func sideBySide(t *testing.T, kind urlKind, size string, n int, run []lib, res *results) {
	keys, absent, mix, inMix := keySets(kind, n)
	fs := make([]filter, len(run))
	for i, l := range run {
		fs[i] = l.make(n)
	}
	for pass := range *passes {
		for j := range run {
			i := (j + pass) % len(run)
			l, f := run[i], fs[i]
			f.clear()
			runtime.GC()
			res.time("Add", size, l.name, n, func() { f.add(keys.keys) })
			if l.addOnly {
				continue
			}
			runtime.GC()
			var hits int
			res.time("Has", size, l.name, mix.len(), func() { hits = f.has(mix.keys) })
			if hits < inMix {
				t.Errorf("%s %s n=%s: %d hits for %d present keys: false negatives", kind.name, l.name, size, hits, inMix)
			}
		}
	}
	for i, l := range run {
		if l.addOnly {
			continue
		}
		f := fs[i]
		if hits := f.has(keys.keys); hits != n {
			t.Errorf("%s %s n=%s: %d of %d added keys present: false negatives", kind.name, l.name, size, hits, n)
		}
		fpr := measureFPR(f, absent)
		res.fpr[size+"/"+l.name] = fpr
		res.bits[size+"/"+l.name] = float64(f.bits) / float64(n)
		if math.Abs(fpr-f.wantFPR)/f.wantFPR > 0.10 {
			t.Errorf("%s %s n=%s: FPR %.5f; want %.5f ± 10%%", kind.name, l.name, size, fpr, f.wantFPR)
		}
	}
}

// results holds the per-key times of every pass of one corpus.
type results struct {
	corpus    string
	sizes     []string
	wall, cpu map[string][]float64 // by op/size/lib
	fpr, bits map[string]float64   // by size/lib
}

func newResults(corpus string) *results {
	return &results{corpus: corpus, wall: map[string][]float64{}, cpu: map[string][]float64{},
		fpr: map[string]float64{}, bits: map[string]float64{}}
}

// time runs fn, which handles keys keys, and records its time per key, and
// prints it as a benchstat line.
func (r *results) time(op, size, name string, keys int, fn func()) {
	if !slices.Contains(r.sizes, size) {
		r.sizes = append(r.sizes, size)
	}
	cpu0, t0 := processCPU(), time.Now()
	fn()
	wall, cpu := float64(time.Since(t0).Nanoseconds())/float64(keys), float64((processCPU()-cpu0).Nanoseconds())/float64(keys)
	id := op + "/" + size + "/" + name
	r.wall[id] = append(r.wall[id], wall)
	r.cpu[id] = append(r.cpu[id], cpu)
	fmt.Printf("Benchmark%s/corpus=%s/n=%s/lib=%s 1 %.2f ns/op %.2f cpu-ns/op\n", op, r.corpus, size, name, wall, cpu)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// print writes the medians of wall and CPU time per key, with the speed-up
// over the baseline (its time divided by the library's), the FPR and bits
// per key, and the targets.
func (r *results) print(run []lib) {
	for _, clock := range []struct {
		name string
		m    map[string][]float64
	}{{"wall", r.wall}, {"CPU", r.cpu}} {
		fmt.Printf("\ncorpus %s: median ns per key (%s time) of %d passes; in parentheses the speed-up over %s\n\n", r.corpus, clock.name, *passes, baseline)
		fmt.Print("| op | n |")
		for _, l := range run {
			fmt.Printf(" %s |", l.name)
		}
		fmt.Print("\n|---|---|" + strings.Repeat("--:|", len(run)) + "\n")
		for _, op := range []string{"Add", "Has"} {
			for _, size := range r.sizes {
				fmt.Printf("| %s | %s |", op, size)
				for _, l := range run {
					v := median(clock.m[op+"/"+size+"/"+l.name])
					if math.IsNaN(v) {
						fmt.Print(" |")
						continue
					}
					base := median(clock.m[op+"/"+size+"/"+baseline])
					fmt.Printf(" %.1f (%.2f×) |", v, base/v)
				}
				fmt.Println()
			}
		}
		for _, size := range r.sizes {
			fmt.Printf("| FPR | %s |", size)
			for _, l := range run {
				if v, ok := r.fpr[size+"/"+l.name]; ok {
					fmt.Printf(" %.3f%% |", 100*v)
				} else {
					fmt.Print(" |")
				}
			}
			fmt.Println()
		}
		for _, size := range r.sizes {
			fmt.Printf("| bits/key | %s |", size)
			for _, l := range run {
				if v, ok := r.bits[size+"/"+l.name]; ok {
					fmt.Printf(" %.2f |", v)
				} else {
					fmt.Print(" |")
				}
			}
			fmt.Println()
		}
	}
	// Both clocks: on a busy machine the wall clock also counts the time
	// spent waiting for a core, which CPU time leaves out.
	for _, clock := range []struct {
		name string
		m    map[string][]float64
	}{{"wall", r.wall}, {"CPU", r.cpu}} {
		fmt.Printf("\ncorpus %s: targets (%s-time medians)\n", r.corpus, clock.name)
		for _, tg := range targets {
			than := cmp.Or(tg.than, baseline)
			v := median(clock.m[tg.op+"/"+tg.size+"/"+tg.lib])
			base := median(clock.m[tg.op+"/"+tg.size+"/"+than])
			if math.IsNaN(v) || math.IsNaN(base) {
				continue
			}
			verdict := "MISS"
			if base/v >= tg.min {
				verdict = "PASS"
			}
			fmt.Printf("- %s %s %s n=%s: %.2f× %s (target ≥ %.1f×)\n", verdict, tg.lib, tg.op, tg.size, base/v, than, tg.min)
		}
	}
}
