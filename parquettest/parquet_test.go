// Package parquettest checks edgebloom's split-block filter against a
// Parquet library (github.com/parquet-go/parquet-go). It is its own module
// so that the library's go.mod keeps xxhash as its only dependency.
//
// TestEdgebloomBitsetInParquetFile follows the recipe of docs/parquet.md: write a
// Parquet file with the library, then put one edgebloom bitset per row group
// after a Thrift-compact BloomFilterHeader, point the column chunk's
// bloom_filter_offset and bloom_filter_length at it, and read it back
// through the library's own bloom-filter check.
package parquettest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

type row struct {
	URL string `parquet:"url"`
}

// groups returns the keys of each row group: URLs, some non-ASCII.
func groups(n, size int) [][]string {
	out := make([][]string, n)
	for g := range out {
		for i := range size {
			out[g] = append(out[g], fmt.Sprintf("https://example.com/%d/päge-%d?q=日本%d", g, i, i*7919))
		}
	}
	return out
}

// writeParquet writes one row group per element of keys, with the given
// writer options.
func writeParquet(t *testing.T, keys [][]string, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, opts...)
	for _, g := range keys {
		rows := make([]row, len(g))
		for i, k := range g {
			rows[i] = row{URL: k}
		}
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func open(t *testing.T, data []byte) *parquet.File {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func filterOf(t *testing.T, rg parquet.RowGroup) parquet.BloomFilter {
	t.Helper()
	bf := rg.ColumnChunks()[0].(*parquet.FileColumnChunk).BloomFilter()
	if bf == nil {
		t.Fatal("the column chunk has no bloom filter")
	}
	return bf
}

// withBitsets returns data (a Parquet file) with bitsets[i] as the filter
// of row group i's only column: each written after a BloomFilterHeader
// (Thrift compact protocol) where the footer was, and the footer written
// again after them with bloom_filter_offset at the header and
// bloom_filter_length covering header and bitset.
func withBitsets(t *testing.T, data []byte, bitsets [][]byte) []byte {
	t.Helper()
	meta := *open(t, data).Metadata()
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	out := bytes.Clone(data[:len(data)-8-footerLen])
	compact := new(thrift.CompactProtocol)
	for i, bitset := range bitsets {
		header, err := thrift.Marshal(compact, &format.BloomFilterHeader{
			NumBytes:    int32(len(bitset)),
			Algorithm:   format.BloomFilterAlgorithm{Value: &format.SplitBlockAlgorithm{}},
			Hash:        format.BloomFilterHash{Value: &format.XxHash{}},
			Compression: format.BloomFilterCompression{Value: &format.BloomFilterUncompressed{}},
		})
		if err != nil {
			t.Fatal(err)
		}
		cc := &meta.RowGroups[i].Columns[0].MetaData
		cc.BloomFilterOffset = int64(len(out))
		cc.BloomFilterLength = int32(len(header) + len(bitset))
		out = append(append(out, header...), bitset...)
	}
	footer, err := thrift.Marshal(compact, &meta)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// One edgebloom filter a row group, sized for Parquet (a power of two of
// blocks), in a file the library wrote; the library's Check finds every
// key of a row group in that row group's filter, and few others.
func TestEdgebloomBitsetInParquetFile(t *testing.T) {
	keys := groups(3, 2000)
	plain := writeParquet(t, keys)
	var bitsets [][]byte
	for _, g := range keys {
		f, err := bloom.NewBlockedForParquet(uint64(len(g)), 0.01)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range g {
			f.AddString(k)
		}
		bitsets = append(bitsets, f.ParquetBitset())
	}
	data := withBitsets(t, plain, bitsets)

	file := open(t, data)
	if n := len(file.RowGroups()); n != len(keys) {
		t.Fatalf("%d row groups; want %d", n, len(keys))
	}
	for i, rg := range file.RowGroups() {
		cc := file.Metadata().RowGroups[i].Columns[0].MetaData
		if cc.BloomFilterOffset == 0 || cc.BloomFilterLength == 0 {
			t.Errorf("row group %d: bloom_filter_offset %d, bloom_filter_length %d; want both set", i, cc.BloomFilterOffset, cc.BloomFilterLength)
		}
		bf := filterOf(t, rg)
		got := make([]byte, bf.Size())
		if _, err := bf.ReadAt(got, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bitsets[i]) {
			t.Errorf("row group %d: the library reads %d bytes that are not the edgebloom bitset of %d", i, len(got), len(bitsets[i]))
		}
		// Its own keys: all present (no false negatives).
		for _, k := range keys[i] {
			if ok, err := bf.Check(parquet.ValueOf(k)); !ok || err != nil {
				t.Fatalf("row group %d: Check(%q): got %v, %v; want true", i, k, ok, err)
			}
		}
		// The other groups' keys: absent but for false positives, at most
		// the 0.9% the filter was sized for (the power of two makes fewer).
		var fp, probes int
		for j, g := range keys {
			if j == i {
				continue
			}
			for _, k := range g {
				probes++
				if ok, _ := bf.Check(parquet.ValueOf(k)); ok {
					fp++
				}
			}
		}
		if rate := float64(fp) / float64(probes); rate > 0.01 {
			t.Errorf("row group %d: %d of %d keys of other row groups found (%.2f%%); want at most 1%%", i, fp, probes, 100*rate)
		}
	}
	// The rows read back as written.
	rows, err := parquet.Read[row](bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3*2000 || rows[2000].URL != keys[1][0] {
		t.Errorf("read %d rows back; want %d, the file's", len(rows), 3*2000)
	}
}

// The other direction: the filters the library writes are, byte for byte,
// edgebloom's of the same number of blocks and keys.
func TestParquetWriterBitsetIsEdgebloom(t *testing.T) {
	keys := groups(2, 3000)
	data := writeParquet(t, keys, parquet.BloomFilters(parquet.SplitBlockFilter(10, "url")))
	for i, rg := range open(t, data).RowGroups() {
		bf := filterOf(t, rg)
		bitset := make([]byte, bf.Size())
		if _, err := bf.ReadAt(bitset, 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		theirs, err := bloom.BlockedFromParquet(bitset)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := bloom.NewBlockedWithSize(theirs.NumBlocks())
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys[i] {
			ours.AddString(k)
			if !theirs.HasString(k) {
				t.Fatalf("row group %d: the library's filter read by edgebloom lacks %q", i, k)
			}
		}
		if !bytes.Equal(ours.ParquetBitset(), bitset) {
			t.Errorf("row group %d: edgebloom's bitset of %d blocks differs from the library's", i, theirs.NumBlocks())
		}
	}
}
