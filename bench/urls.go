// The corpora: crawler-like URLs made from their index, the same for the
// Go benchmarks and, through WriteCorpus and cmd/corpus, the JavaScript one.

package bench

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
)

// corpusSeed fixes every URL the benchmarks and tests use.
const corpusSeed = 0xed9eb100

// firstAbsent is the index of the first never-added URL. Present keys have
// indexes below it, so the two sets never meet (see appendURL).
const firstAbsent = 1 << 39

// numAbsent is how many never-added URLs measure the false-positive rate:
// at p = 1% that is about 10 000 false positives, a relative standard error
// of 1%.
const numAbsent = 1_000_000

// A corpus holds keys the way a crawler holds them: each URL its own string,
// made by its own allocation, and the slice in random order, so that reading
// the keys in slice order reads their bytes from all over the heap, as a
// crawler does with URLs that arrived at different times. Ten million URLs
// take about 1.1 GB this way. The corpora are made before any timing starts.
type corpus struct {
	keys []string
}

func (c *corpus) len() int { return len(c.keys) }

// A urlKind is one family of URLs: appendURL (crawler-like ASCII URLs) or
// appendIntlURL (half of them non-ASCII). Every kind writes URL number i
// with the index readable back by urlIndex, so present and absent keys can
// be told apart, and distinct i give distinct URLs.
type urlKind struct {
	name   string
	append func(dst []byte, i uint64) []byte
}

// urlKinds are the corpora every benchmark runs on.
var urlKinds = []urlKind{
	{"crawl", appendURL},
	{"intl", appendIntlURL},
}

// makeCorpus returns the URLs of kind with indexes first, first+1, …
// first+n-1, each its own string, shuffled with a fixed seed.
func makeCorpus(kind urlKind, first uint64, n int) *corpus {
	c := &corpus{keys: make([]string, n)}
	var buf []byte
	for j := range n {
		buf = kind.append(buf[:0], first+uint64(j))
		c.keys[j] = string(buf) // one allocation per key
	}
	r := rng(corpusSeed ^ first ^ uint64(n))
	for j := n - 1; j > 0; j-- {
		i := r.intn(j + 1)
		c.keys[i], c.keys[j] = c.keys[j], c.keys[i]
	}
	return c
}

// The corpora are made once per test binary and shared by every benchmark.
// Only one kind and size is kept at a time: 10M URLs of both kinds would
// hold 2.5 GB.
var corpora struct {
	sync.Mutex
	kind    string
	n       int
	present *corpus // URLs 0 … n-1 of kind, the keys every filter is filled with
	absent  *corpus // numAbsent URLs of kind from firstAbsent on
	mix     *corpus // probeMix for present
	inMix   int     // present keys in mix
}

// keySets returns the present keys of kind for filters of n keys, the
// numAbsent never-added keys, and the Has benchmarks' probe mix with the
// number of present keys in it.
func keySets(kind urlKind, n int) (present, absent, mix *corpus, inMix int) {
	corpora.Lock()
	defer corpora.Unlock()
	if corpora.kind != kind.name || corpora.n != n {
		// Let the old sets go before making the new ones.
		corpora.present, corpora.absent, corpora.mix = nil, nil, nil
		runtime.GC()
		corpora.kind, corpora.n = kind.name, n
		corpora.present = makeCorpus(kind, 0, n)
		corpora.absent = makeCorpus(kind, firstAbsent, numAbsent)
		corpora.mix, corpora.inMix = probeMix(corpora.present, corpora.absent)
	}
	return corpora.present, corpora.absent, corpora.mix, corpora.inMix
}

// probeMix returns the keys the Has benchmarks probe: numAbsent keys in a
// fixed random order, each with probability 1/2 one of present (the same
// string, as a crawler probes the URL it holds) and otherwise one of absent.
// It also returns how many of them are present.
func probeMix(present, absent *corpus) (mix *corpus, inMix int) {
	mix = &corpus{keys: make([]string, numAbsent)}
	for j, i := range probeOrder(present.len()) {
		if i >= 0 {
			mix.keys[j] = present.keys[i]
			inMix++
		} else {
			mix.keys[j] = absent.keys[j]
		}
	}
	return mix, inMix
}

// probeOrder returns, for each of the numAbsent probes of the mix over n
// present keys, the index of its present key, or -1 for absent key j.
func probeOrder(n int) []int {
	r := rng(corpusSeed ^ uint64(n))
	order := make([]int, numAbsent)
	for j := range order {
		order[j] = -1
		if r.intn(2) == 0 {
			order[j] = r.intn(n)
		}
	}
	return order
}

// WriteCorpus writes the corpus of the named kind ("crawl" or "intl") for
// filters of n keys, as the Go benchmarks use it, to w for the JavaScript
// benchmark (js/bench.mjs): a line "<n> <numAbsent>", the n present URLs in
// their shuffled order, one a line, the numAbsent never-added URLs, then
// the probe mix as numAbsent lines, each the index of a present URL or "a"
// for the absent URL of the same line number. URLs hold no newline.
func WriteCorpus(w io.Writer, kind string, n int) error {
	var k urlKind
	for _, c := range urlKinds {
		if c.name == kind {
			k = c
		}
	}
	if k.name == "" {
		return fmt.Errorf("bench: no corpus %q (crawl or intl)", kind)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(bw, "%d %d\n", n, numAbsent)
	for _, c := range []*corpus{makeCorpus(k, 0, n), makeCorpus(k, firstAbsent, numAbsent)} {
		for _, key := range c.keys {
			bw.WriteString(key)
			bw.WriteByte('\n')
		}
	}
	for _, i := range probeOrder(n) {
		if i < 0 {
			bw.WriteString("a\n")
		} else {
			bw.WriteString(strconv.Itoa(i))
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// rng is a SplitMix64 generator.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n) (Lemire's multiply-shift, without the
// rejection step: the bias is below n/2^32, far below anything measured here).
func (r *rng) intn(n int) int { return int((r.next() >> 32) * uint64(n) >> 32) }

// Word lists for URLs. Words hold letters and '-' only, never digits, so the
// digits after a URL's last '-' are its index (see appendURL).
var (
	syllables = [...]string{"ka", "mo", "ra", "ti", "lo", "ne", "su", "pa", "vi", "do",
		"ber", "gen", "tor", "lan", "mar", "sel", "win", "fox", "quin", "zel"}
	tlds     = [...]string{".com", ".com", ".com", ".com", ".org", ".net", ".co.uk", ".de", ".io"}
	sections = [...]string{"news", "blog", "products", "category", "articles", "en", "en-us",
		"shop", "p", "tag", "sports", "tech", "world", "docs", "forum", "wiki", "item", "search"}
	words = [...]string{"how", "to", "best", "new", "review", "guide", "the", "for", "with",
		"cheap", "top", "free", "update", "release", "open", "source", "city", "home", "garden",
		"travel", "market", "report", "video", "photos", "live", "first", "world", "summer",
		"winter", "sale", "recipe", "easy", "chicken", "election", "results", "football",
		"transfer", "rumours", "phone", "laptop", "deals", "weekend", "weather", "forecast"}
	sources = [...]string{"google", "twitter", "facebook", "newsletter", "reddit", "bing", "linkedin"}
	mediums = [...]string{"email", "social", "cpc", "rss", "referral"}
)

// appendURL appends URL number i (i < 2^40) to dst, shaped like what a
// crawler queues:
//
//	https://www.<host><tld>[/<section>…]/<slug words>-<id>[?utm_source=…&utm_medium=…]
//
// The total length is drawn from a triangular distribution on [40, 120]
// (mean 80); hosts are log-uniform over 2^16 names, so a few hosts have many
// URLs, as in a crawl. The id is a bijective scramble of i, so distinct i
// give distinct URLs and urlIndex reads i back.
func appendURL(dst []byte, i uint64) []byte {
	r := rng(corpusSeed ^ i*0xd1b54a32d192ed03)
	target := 40 + r.intn(41) + r.intn(41)
	start := len(dst)

	dst = appendHost(append(dst, "https://"...), &r)

	id := scramble(i)
	tail := 1 + digits(id) // "-<id>"
	query := r.intn(10) < 3
	src, med := sources[r.intn(len(sources))], mediums[r.intn(len(mediums))]
	queryLen := len("?utm_source=") + len(src) + len("&utm_medium=") + len(med)
	if query && len(dst)-start+1+tail+queryLen+8 > target {
		query = false
	}
	if query {
		tail += queryLen
	}

	for range r.intn(3) {
		sec := sections[r.intn(len(sections))]
		if len(dst)-start+1+len(sec)+1+8+tail > target {
			break
		}
		dst = append(append(dst, '/'), sec...)
	}
	// Slug words fill up to the target length; the last one is cut to fit.
	dst = append(dst, '/')
	for sep := false; ; sep = true {
		budget := target - tail - (len(dst) - start)
		if budget <= 0 {
			break
		}
		if sep {
			if budget == 1 { // no room for "-x": make the last word plural
				dst = append(dst, 's')
				break
			}
			dst = append(dst, '-')
			budget--
		}
		w := words[r.intn(len(words))]
		if len(w) > budget {
			w = w[:budget]
		}
		dst = append(dst, w...)
	}

	dst = strconv.AppendUint(append(dst, '-'), id, 10)
	if query {
		dst = append(append(append(append(dst, "?utm_source="...), src...), "&utm_medium="...), med...)
	}
	return dst
}

// appendHost appends "www.", a host name log-uniform over 2^16 names and a
// top-level domain.
func appendHost(dst []byte, r *rng) []byte {
	dst = append(dst, "www."...)
	host := r.intn(1 << r.intn(17))
	for s := 0; s < 2 || host > 0; s++ {
		dst = append(dst, syllables[host%len(syllables)]...)
		host /= len(syllables)
	}
	return append(dst, tlds[r.intn(len(tlds))]...)
}

const mask40 = 1<<40 - 1

// scramble is a bijection on [0, 2^40): odd multipliers and xor-shifts are
// each invertible modulo 2^40.
func scramble(x uint64) uint64 {
	x = x * 0x9e3779b97f4a7c15 & mask40
	x ^= x >> 21
	x = x * 0xbf58476d1ce4e5b9 & mask40
	x ^= x >> 19
	return x
}

// unscramble inverts scramble.
func unscramble(x uint64) uint64 {
	x ^= x >> 19 // x>>19 ^ x>>38 undoes a shift of 19 on 40 bits
	x ^= x >> 38
	x = x * inverse40(0xbf58476d1ce4e5b9) & mask40
	x ^= x >> 21 // 2·21 > 40: one step undoes it
	x = x * inverse40(0x9e3779b97f4a7c15) & mask40
	return x
}

// inverse40 returns the inverse of the odd number a modulo 2^40, by Newton's
// iteration: each step doubles the number of correct low bits.
func inverse40(a uint64) uint64 {
	x := a // correct to 3 bits for odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x & mask40
}

// urlIndex returns the index i that appendURL made key from.
func urlIndex(key string) uint64 {
	end := len(key)
	for j, c := range key {
		if c == '?' {
			end = j
			break
		}
	}
	start := end
	for start > 0 && key[start-1] >= '0' && key[start-1] <= '9' {
		start--
	}
	id, err := strconv.ParseUint(key[start:end], 10, 64)
	if err != nil {
		panic("bench: not a corpus URL: " + key)
	}
	return unscramble(id)
}

func digits(x uint64) int {
	n := 1
	for ; x >= 10; x /= 10 {
		n++
	}
	return n
}
