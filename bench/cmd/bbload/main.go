// Command bbload loads URLs, one a line, into a bits-and-blooms filter with
// test-and-add, the same work "edgebloom build" does, to compare the two
// (see ../../README.md, "Commands"):
//
//	go run ./cmd/bbload -n 10000000 -p 0.01 urls.txt
//
// It prints the keys, how many were new, the rate and the peak resident
// memory of the process.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/bits-and-blooms/bloom/v3"
)

func main() {
	n := flag.Uint("n", 10_000_000, "number of keys the filter is made for")
	p := flag.Float64("p", 0.01, "target false-positive rate")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bbload [-n N] [-p P] FILE")
		os.Exit(2)
	}
	in, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bbload:", err)
		os.Exit(2)
	}
	defer in.Close()

	start := time.Now()
	f := bloom.NewWithEstimates(*n, *p)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var keys, added uint64
	for sc.Scan() {
		key := bytes.TrimSpace(sc.Bytes())
		if len(key) == 0 {
			continue
		}
		keys++
		if !f.TestAndAdd(key) {
			added++
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "bbload:", err)
		os.Exit(2)
	}
	elapsed := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("keys %d, new %d, duplicates %d, bits %d, k %d, %.2fs, %.2fM keys/s, max RSS %d MiB\n",
		keys, added, keys-added, f.Cap(), f.K(), elapsed.Seconds(), float64(keys)/elapsed.Seconds()/1e6, ru.Maxrss/1024)
}
