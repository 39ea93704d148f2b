// Command genurls writes crawler-like URLs, one a line, as input for the
// edgebloom CLI benchmark (see ../../README.md, "Commands"):
//
//	go run ./cmd/genurls -n 10000000 -dup 0.1 > urls.txt
//
// A URL looks like https://www.<host><tld>/<section>/<words>-<id>, with a
// utm query on about a third of them; hosts are log-uniform over 2^16 names,
// as in a crawl where a few sites have most pages. A fraction -dup of the
// lines repeat an earlier line, as a crawl frontier does. The output depends
// on -n, -dup and -seed only.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
)

var (
	syllables = []string{"ka", "mo", "ra", "ti", "lo", "ne", "su", "pa", "vi", "do", "ber", "gen", "tor", "lan", "mar", "sel"}
	tlds      = []string{".com", ".com", ".com", ".org", ".net", ".co.uk", ".de", ".io"}
	sections  = []string{"news", "blog", "products", "category", "en", "shop", "p", "tag", "docs", "wiki", "item"}
	words     = []string{"how", "to", "best", "new", "review", "guide", "the", "for", "cheap", "top", "free",
		"update", "open", "city", "home", "travel", "market", "report", "video", "live", "summer", "sale",
		"recipe", "easy", "results", "football", "phone", "laptop", "deals", "weather"}
	queries = []string{"?utm_source=newsletter&utm_medium=email", "?utm_source=twitter&utm_medium=social",
		"?ref=home", "?page=2", "?utm_campaign=spring&gclid=abc123"}
)

// splitmix is the SplitMix64 generator.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// below returns a number in [0, n).
func (s *splitmix) below(n int) int { return int(s.next() % uint64(n)) }

// appendURL appends URL number i; distinct i give distinct URLs, because i
// itself ends the path.
func appendURL(dst []byte, seed, i uint64) []byte {
	r := splitmix(seed ^ i*0xd1b54a32d192ed03)
	dst = append(dst, "https://www."...)
	for host, s := r.below(1<<r.below(17)), 0; s < 2 || host > 0; s++ {
		dst = append(dst, syllables[host%len(syllables)]...)
		host /= len(syllables)
	}
	dst = append(dst, tlds[r.below(len(tlds))]...)
	for range r.below(3) {
		dst = append(append(dst, '/'), sections[r.below(len(sections))]...)
	}
	sep := byte('/')
	for range 2 + r.below(5) {
		dst = append(append(dst, sep), words[r.below(len(words))]...)
		sep = '-'
	}
	dst = strconv.AppendUint(append(dst, '-'), i, 10)
	if r.below(3) == 0 {
		dst = append(dst, queries[r.below(len(queries))]...)
	}
	return append(dst, '\n')
}

func main() {
	n := flag.Uint64("n", 10_000_000, "number of lines")
	dup := flag.Float64("dup", 0, "fraction of lines that repeat an earlier line")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if *dup < 0 || *dup >= 1 {
		fmt.Fprintln(os.Stderr, "genurls: -dup must be in [0, 1)")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	r := splitmix(*seed)
	threshold := uint64(*dup * (1 << 53))
	var buf []byte
	var distinct uint64
	for range *n {
		i := distinct
		if distinct > 0 && r.next()>>11 < threshold {
			i = uint64(r.below(int(distinct))) // a repeat of an earlier URL
		} else {
			distinct++
		}
		buf = appendURL(buf[:0], *seed, i)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "genurls:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genurls: %d lines, %d distinct URLs\n", *n, distinct)
}
