// Command corpus writes a benchmark corpus, exactly as the Go benchmarks
// make it, for the JavaScript benchmark (js/bench.mjs runs it):
//
//	go run ./cmd/corpus -kind crawl -n 1000000 > crawl.txt
//
// See bench.WriteCorpus for the format.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/bench"
)

func main() {
	kind := flag.String("kind", "crawl", "the corpus: crawl (ASCII URLs) or intl (three quarters non-ASCII)")
	n := flag.Int("n", 1_000_000, "present keys")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "corpus: -n must be at least 1")
		os.Exit(2)
	}
	if err := bench.WriteCorpus(os.Stdout, *kind, *n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
