// Command parquet writes a Parquet file whose row groups each carry an
// edgebloom filter of their URLs, and finds a URL in it with a reader that
// skips every row group whose filter rules the URL out.
//
//	go run . write crawl.parquet            # 8 row groups of 10,000 URLs, a filter each
//	go run . find crawl.parquet https://example.com/3/page-4242
//
// The writer is parquet-go (github.com/parquet-go/parquet-go); the filters
// are edgebloom's split-block filters, which are Parquet's Split Block Bloom
// Filters bit for bit, sized with bloom.NewBlockedForParquet (a power of two
// of blocks, which every Parquet reader accepts) and put in the file the way
// the format says: a Thrift BloomFilterHeader and the bitset, pointed at by
// the column chunk's bloom_filter_offset and bloom_filter_length. The reader
// is arrow-go (github.com/apache/arrow-go): it reads a row group's filter,
// asks it, and reads the column's pages only where the answer is "maybe".
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

const usage = `usage:
  parquet write FILE         write FILE: 8 row groups of 10,000 URLs, an edgebloom filter each
  parquet find FILE URL...   find each URL, reading only the row groups its filter lets through`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) == 2 && args[0] == "write":
		err = writeFile(args[1], sampleGroups(8, 10_000))
		if err == nil {
			fmt.Fprintf(stdout, "wrote %s: 8 row groups of 10000 URLs, an edgebloom filter each\n", args[1])
		}
	case len(args) >= 3 && args[0] == "find":
		var results []result
		results, err = find(args[1], args[2:])
		for _, r := range results {
			fmt.Fprintln(stdout, r)
		}
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "parquet: %v\n", err)
		return 2
	}
	return 0
}

// sampleGroups returns the URLs of each row group: group g holds the pages
// of host g.example.com, the way a crawl log partitioned by site would.
func sampleGroups(groups, size int) [][]string {
	out := make([][]string, groups)
	for g := range out {
		for i := range size {
			out[g] = append(out[g], fmt.Sprintf("https://%d.example.com/page-%d", g, i))
		}
	}
	return out
}

// A result is what find learnt about one URL.
type result struct {
	URL     string
	Read    []int // row groups whose filter said "maybe": their URL column was read
	Skipped int   // row groups whose filter ruled the URL out
	Found   []int // row groups that hold the URL
}

func (r result) String() string {
	where := "not found"
	if len(r.Found) > 0 {
		where = fmt.Sprintf("found in row group %v", r.Found)
	}
	return fmt.Sprintf("%s: %s; read %d row group(s) %v, skipped %d by their filters", r.URL, where, len(r.Read), r.Read, r.Skipped)
}

// find looks each URL up in the file at path, with arrow-go.
func find(path string, urls []string) ([]result, error) {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (make one with: parquet write %s)", path, err, path)
	}
	defer rdr.Close()
	col := rdr.MetaData().Schema.ColumnIndexByName("url")
	if col < 0 {
		return nil, fmt.Errorf("%s has no column \"url\"", path)
	}
	filters := rdr.GetBloomFilterReader()
	var out []result
	for _, u := range urls {
		r := result{URL: u}
		for g := range rdr.NumRowGroups() {
			rg, err := filters.RowGroup(g)
			if err != nil {
				return nil, err
			}
			bf, err := rg.GetColumnBloomFilter(col)
			if err != nil {
				return nil, fmt.Errorf("row group %d: reading its filter: %w", g, err)
			}
			// A row group without a filter must be read.
			if bf != nil && !(&metadata.TypedBloomFilter[parquet.ByteArray]{BloomFilter: bf}).Check(parquet.ByteArray(u)) {
				r.Skipped++
				continue
			}
			r.Read = append(r.Read, g)
			found, err := columnHolds(rdr.RowGroup(g), col, u)
			if err != nil {
				return nil, fmt.Errorf("row group %d: %w", g, err)
			}
			if found {
				r.Found = append(r.Found, g)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// columnHolds reads column col of a row group and reports whether it holds u.
func columnHolds(rg *file.RowGroupReader, col int, u string) (bool, error) {
	cr, err := rg.Column(col)
	if err != nil {
		return false, err
	}
	chunk, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return false, errors.New("the url column is not a byte array column")
	}
	values := make([]parquet.ByteArray, 1024)
	for chunk.HasNext() {
		_, n, err := chunk.ReadBatch(int64(len(values)), values, nil, nil)
		if err != nil {
			return false, err
		}
		for _, v := range values[:n] {
			if string(v) == u {
				return true, nil
			}
		}
	}
	return false, nil
}
