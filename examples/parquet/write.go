package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

type row struct {
	URL string `parquet:"url"`
}

// writeFile writes a Parquet file to path with one row group per element
// of groups and an edgebloom filter of each row group's URLs.
func writeFile(path string, groups [][]string) error {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	var bitsets [][]byte
	for _, g := range groups {
		f, err := newFilter(g)
		if err != nil {
			return err
		}
		rows := make([]row, len(g))
		for i, u := range g {
			rows[i] = row{URL: u}
		}
		if _, err := w.Write(rows); err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // ends the row group
			return err
		}
		bitsets = append(bitsets, f.ParquetBitset())
	}
	if err := w.Close(); err != nil {
		return err
	}
	data, err := withFilters(buf.Bytes(), bitsets)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// newFilter returns the filter of one row group's URLs: made for them at
// 1 %, rounded up to a power of two of blocks, which every Parquet reader
// accepts (pyarrow, Velox and ClickHouse refuse other lengths). 10,000 URLs
// take 512 blocks (16 KiB), wrong about 0.35 % of other URLs.
func newFilter(urls []string) (*bloom.BlockedFilter, error) {
	f, err := bloom.NewBlockedForParquet(uint64(len(urls)), 0.01)
	if err != nil {
		return nil, err
	}
	for _, u := range urls {
		f.AddString(u)
	}
	return f, nil
}

// withFilters returns the Parquet file data with bitsets[i] as the filter
// of row group i's first column: the footer is taken off, each bitset
// written after its BloomFilterHeader (Thrift compact protocol, as the
// footer), and the footer written again with each column chunk's
// bloom_filter_offset and bloom_filter_length pointing at them.
func withFilters(data []byte, bitsets [][]byte) ([]byte, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	meta := *f.Metadata()
	if len(meta.RowGroups) != len(bitsets) {
		return nil, fmt.Errorf("%d row groups, %d filters", len(meta.RowGroups), len(bitsets))
	}
	footerLen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	out := bytes.Clone(data[:len(data)-8-footerLen])
	protocol := new(thrift.CompactProtocol)
	for i, bitset := range bitsets {
		header, err := thrift.Marshal(protocol, &format.BloomFilterHeader{
			NumBytes:    int32(len(bitset)),
			Algorithm:   format.BloomFilterAlgorithm{Value: &format.SplitBlockAlgorithm{}},
			Hash:        format.BloomFilterHash{Value: &format.XxHash{}},
			Compression: format.BloomFilterCompression{Value: &format.BloomFilterUncompressed{}},
		})
		if err != nil {
			return nil, err
		}
		chunk := &meta.RowGroups[i].Columns[0].MetaData
		chunk.BloomFilterOffset = int64(len(out))
		chunk.BloomFilterLength = int32(len(header) + len(bitset))
		out = append(append(out, header...), bitset...)
	}
	footer, err := thrift.Marshal(protocol, &meta)
	if err != nil {
		return nil, err
	}
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
