package bench

import (
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

// A corpus holds keys back to back in one byte slice, made before any timing
// starts. Ten million URLs take about 800 MB this way, against about 1.2 GB
// as separate strings or slices.
type corpus struct {
	data []byte
	end  []uint32 // key j is data[end[j-1]:end[j]], with end[-1] = 0
}

func (c *corpus) len() int { return len(c.end) }

func (c *corpus) key(j int) []byte {
	start := uint32(0)
	if j > 0 {
		start = c.end[j-1]
	}
	return c.data[start:c.end[j]]
}

// prefix returns the first n keys of c without copying.
func (c *corpus) prefix(n int) *corpus {
	return &corpus{data: c.data[:c.end[n-1]], end: c.end[:n]}
}

func (c *corpus) append(key []byte) {
	c.data = append(c.data, key...)
	c.end = append(c.end, uint32(len(c.data)))
}

// makeCorpus returns the URLs with indexes first, first+1, … first+n-1.
func makeCorpus(first uint64, n int) *corpus {
	c := &corpus{data: make([]byte, 0, n*84), end: make([]uint32, n)}
	for j := range n {
		c.data = appendURL(c.data, first+uint64(j))
		c.end[j] = uint32(len(c.data))
	}
	return c
}

// The corpora are made once per test binary and shared by every benchmark.
var corpora struct {
	sync.Mutex
	present *corpus         // URLs 0, 1, …: the largest n asked for so far
	absent  *corpus         // numAbsent URLs from firstAbsent on
	mixes   map[int]*corpus // probeMix by n
}

// presentKeys returns URLs 0 … n-1, the keys every filter is filled with.
func presentKeys(n int) *corpus {
	corpora.Lock()
	defer corpora.Unlock()
	if corpora.present == nil || corpora.present.len() < n {
		corpora.present = nil // let the old one go before making the new one
		corpora.present = makeCorpus(0, n)
	}
	return corpora.present.prefix(n)
}

// absentKeys returns numAbsent URLs that are never added to any filter.
func absentKeys() *corpus {
	corpora.Lock()
	defer corpora.Unlock()
	if corpora.absent == nil {
		corpora.absent = makeCorpus(firstAbsent, numAbsent)
	}
	return corpora.absent
}

// probeMix returns the keys the Has benchmarks probe, for filters holding
// presentKeys(n): numAbsent keys in a fixed random order, each with
// probability 1/2 a present key (any of the n) and otherwise a never-added
// one, copied into one slice so probing reads them sequentially. It also
// returns how many of them are present.
func probeMix(n int) (mix *corpus, present int) {
	keys, absent := presentKeys(n), absentKeys()
	corpora.Lock()
	defer corpora.Unlock()
	if m := corpora.mixes[n]; m != nil {
		return m, countPresent(m)
	}
	r := rng(corpusSeed ^ uint64(n))
	mix = &corpus{data: make([]byte, 0, len(absent.data)), end: make([]uint32, 0, numAbsent)}
	for j := range numAbsent {
		if r.intn(2) == 0 {
			mix.append(keys.key(r.intn(n)))
		} else {
			mix.append(absent.key(j))
		}
	}
	if corpora.mixes == nil {
		corpora.mixes = make(map[int]*corpus)
	}
	corpora.mixes[n] = mix
	return mix, countPresent(mix)
}

// countPresent counts the keys of a probe mix that were added: those whose
// index, read back from the URL, is below firstAbsent.
func countPresent(mix *corpus) (present int) {
	for j := range mix.len() {
		if urlIndex(mix.key(j)) < firstAbsent {
			present++
		}
	}
	return present
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

	dst = append(dst, "https://www."...)
	host := r.intn(1 << r.intn(17))
	for s := 0; s < 2 || host > 0; s++ {
		dst = append(dst, syllables[host%len(syllables)]...)
		host /= len(syllables)
	}
	dst = append(dst, tlds[r.intn(len(tlds))]...)

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
func urlIndex(key []byte) uint64 {
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
	id, err := strconv.ParseUint(string(key[start:end]), 10, 64)
	if err != nil {
		panic("bench: not a corpus URL: " + string(key))
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
