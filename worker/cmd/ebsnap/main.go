// Command ebsnap loads a snapshot of the edge service, plain or sharded
// (package snapshot), and looks keys up in it.
//
//	ebsnap SNAPSHOT < keys
//
// reads one key a line from standard input and prints one line of 0s and
// 1s, a 1 for each key the snapshot reports probably present. The worker's
// tests use it to check that Go answers as the service and the npm module do.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

func main() {
	maxBits := flag.Uint64("max-bits", bloom.DefaultMaxBits, "refuse filters with more bits")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: ebsnap [-max-bits N] SNAPSHOT < keys")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ebsnap:", err)
		os.Exit(1)
	}
	set, err := snapshot.Load(data, *maxBits)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ebsnap:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		if set.Has(in.Bytes()) {
			out.WriteByte('1')
		} else {
			out.WriteByte('0')
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "ebsnap:", err)
		os.Exit(1)
	}
	out.WriteByte('\n')
	out.Flush()
}
