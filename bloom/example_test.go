package bloom_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"
	"strconv"
	"sync"

	"github.com/edgebloom/edgebloom/bloom"
)

// The Go usage of the README and docs/go.md, run: every line of it stands here.
func ExampleNew() {
	f, err := bloom.New(1_000_000, 0.01) // 1 M keys at 1 % false positives: 9.6 bits a key, k = 7
	if err != nil {
		log.Fatal(err)
	}
	if f.AddString("https://example.com/") { // test-and-add in one call
		crawl("https://example.com/") // true: it was new
	}
	fmt.Println(f.HasString("https://example.com/"))      // true: probably in f
	fmt.Println(f.HasString("https://example.com/other")) // false: certainly not

	data, _ := f.MarshalBinary()                         // the portable format, docs/format.md
	g, err := bloom.Decode(bytes.NewReader(data), 1<<33) // from an untrusted reader: at most 2^33 bits
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Equal(f), g.NumBits(), "bits,", g.NumHashes(), "hashes")
	// Output:
	// crawl https://example.com/
	// true
	// false
	// true 9585059 bits, 7 hashes
}

// The README's quick start.
func Example_quickStart() {
	f, err := bloom.New(1_000_000, 0.01) // 1 M keys at 1 % false positives: 9.6 bits a key, k = 7
	if err != nil {
		log.Fatal(err)
	}
	if f.AddString("https://example.com/") { // test-and-add in one call
		fmt.Println("new: fetch it") // true: it was new
	}
	fmt.Println(f.HasString("https://example.com/"))      // true: probably in f
	fmt.Println(f.HasString("https://example.com/other")) // false: certainly not
	// Output:
	// new: fetch it
	// true
	// false
}

// crawl stands for a crawler's fetch.
func crawl(url string) { fmt.Println("crawl", url) }

// A crawler tests and adds in one call: Add reports whether the URL was new.
func ExampleFilter_Add() {
	seen, err := bloom.New(10_000, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	for _, url := range []string{
		"https://example.com/",
		"https://example.com/about",
		"https://example.com/",
		"https://例子.测试/路径",
		"https://example.com/about",
	} {
		if seen.AddString(url) {
			fmt.Println("fetch", url)
		} else {
			fmt.Println("skip ", url)
		}
	}
	fmt.Println(seen.Count(), "fetched")
	// Output:
	// fetch https://example.com/
	// fetch https://example.com/about
	// skip  https://example.com/
	// fetch https://例子.测试/路径
	// skip  https://example.com/about
	// 3 fetched
}

// Several goroutines fill one SyncFilter without a lock; its bytes are a
// Filter's, so Decode reads them into the single-writer type.
func ExampleSyncFilter() {
	seen, err := bloom.NewSync(10_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				seen.AddString("https://example.com/" + strconv.Itoa(w) + "/" + strconv.Itoa(i))
			}
		}()
	}
	wg.Wait()
	data, err := seen.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	f, err := bloom.Decode(bytes.NewReader(data), bloom.DefaultMaxBits)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(seen.Count(), f.HasString("https://example.com/3/99"))
	// Output: 400 true
}

func ExampleCountingFilter_Remove() {
	f, err := bloom.NewCounting(1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.Add([]byte("session-1"))
	f.Add([]byte("session-2"))
	fmt.Println(f.Remove([]byte("session-1")))                          // was present
	fmt.Println(f.Has([]byte("session-1")), f.Has([]byte("session-2"))) // the other key stays
	fmt.Println(f.Remove([]byte("session-3")))                          // certainly absent: nothing changes
	// Output:
	// true
	// false true
	// false
}

func ExampleScalableFilter() {
	// Sized for 100 keys, it grows by layers as 10 000 arrive.
	s, err := bloom.NewScalable(100, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	for i := range 10_000 {
		s.AddString("https://example.com/page/" + strconv.Itoa(i))
	}
	fmt.Println(s.Layers(), "layers")
	fmt.Println(s.HasString("https://example.com/page/42"))
	fmt.Println(s.EstimatedFPR() < s.TargetFPR())
	// Output:
	// 7 layers
	// true
	// true
}

func ExampleWindowFilter() {
	// "Seen in the last 3 days": one generation a day.
	w, err := bloom.NewWindow(10_000, 0.001, 3)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.AddString("https://example.com/a")) // day 1: new
	w.Rotate()
	fmt.Println(w.AddString("https://example.com/a")) // day 2: seen yesterday
	w.Rotate()
	w.Rotate()
	fmt.Println(w.HasString("https://example.com/a")) // day 4: last added on day 2
	w.Rotate()
	fmt.Println(w.HasString("https://example.com/a")) // day 5: forgotten
	// Output:
	// true
	// false
	// true
	// false
}

// docs/go.md's window: "seen in the last 7 days".
func ExampleNewWindow() {
	url := "https://example.com/"
	w, err := bloom.NewWindow(1_000_000, 0.001, 7) // 7 generations of 1 M keys
	if err != nil {
		log.Fatal(err)
	}
	w.AddString(url) // true when no generation had it
	w.Rotate()       // once a day: the oldest day goes
	fmt.Println(w.HasString(url), w.Generations())
	// Output: true 7
}

func ExampleDecode() {
	f, err := bloom.New(1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.AddString("https://example.com/")
	data, err := f.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}

	// From an untrusted source: refuse more than 1 Mbit before allocating.
	g, err := bloom.Decode(bytes.NewReader(data), 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.HasString("https://example.com/"), g.Count())

	_, err = bloom.Decode(bytes.NewReader(data), 1000)
	fmt.Println(errors.Is(err, bloom.ErrTooLarge), err)
	_, err = bloom.Decode(bytes.NewReader(bytes.Repeat([]byte("?"), 100)), 1<<20)
	fmt.Println(errors.Is(err, bloom.ErrNotFilter), err)
	// Output:
	// true 1
	// true bloom: filter exceeds the size bound: 9586 bits, bound 1000
	// true bloom: not an edgebloom filter
}

// A split-block filter tests and adds like the others, with one cache miss a
// key, and its bitset is what a Parquet file stores.
func ExampleNewBlocked() {
	f, err := bloom.NewBlocked(1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.AddString("https://example.com/")) // new
	fmt.Println(f.AddString("https://example.com/")) // seen
	fmt.Println(f.HasString("https://example.com/other"))
	fmt.Println(f.NumBlocks(), "blocks,", len(f.ParquetBitset()), "bytes of Parquet bitset")
	// Output:
	// true
	// false
	// false
	// 42081 blocks, 1346592 bytes of Parquet bitset
}

// The split-block filter of docs/go.md and docs/parquet.md: built here, its bitset goes into a
// Parquet file; read back from one, it answers for that column chunk.
func ExampleBlockedFilter() {
	url := "https://example.com/"
	b, err := bloom.NewBlocked(10_000_000, 0.01) // 420 805 blocks, 10.8 bits a key (sized from the split-block rate)
	if err != nil {
		log.Fatal(err)
	}
	if b.AddString(url) { // test-and-add, as for Filter
		crawl(url)
	}
	bitset := b.ParquetBitset() // after a BloomFilterHeader{numBytes: len(bitset), BLOCK, XXHASH, UNCOMPRESSED}

	// For a Parquet file every reader accepts: a power of two of blocks.
	pq, err := bloom.NewBlockedForParquet(10_000_000, 0.01) // 524 288 blocks (16 MiB), expected rate 0.32 % at 10 M keys
	if err != nil {
		log.Fatal(err)
	}

	bitsetFromAParquetFile := bitset // here, the bytes just written
	value := "https://example.com/other"

	p, err := bloom.BlockedFromParquet(bitsetFromAParquetFile) // validated: whole 32-byte blocks, at most 128 MiB
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.HasString(value)) // false: certainly not in that column chunk
	fmt.Println(p.HasString(url), b.NumBlocks(), "blocks")
	fmt.Printf("%d blocks for Parquet, expected rate %.2f%%\n", pq.NumBlocks(), 100*bloom.EstimateBlockedFPR(pq.NumBlocks(), 10_000_000))
	// Output:
	// crawl https://example.com/
	// false
	// true 420805 blocks
	// 524288 blocks for Parquet, expected rate 0.32%
}

// BlockedFromParquet reads the bitset of a Parquet split-block Bloom filter,
// the numBytes bytes after a column chunk's BloomFilterHeader.
func ExampleBlockedFromParquet() {
	written, err := bloom.NewBlocked(1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	written.AddString("https://例子.测试/路径")
	bitset := written.ParquetBitset() // as a Parquet writer would store it

	f, err := bloom.BlockedFromParquet(bitset)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.HasString("https://例子.测试/路径"))
	fmt.Println(f.Count(), "key, estimated from the bits")
	_, err = bloom.BlockedFromParquet(bitset[:40])
	fmt.Println(err)
	// Output:
	// true
	// 1 key, estimated from the bits
	// bloom: invalid bitset: length must be a positive multiple of 32 bytes, got 40
}
