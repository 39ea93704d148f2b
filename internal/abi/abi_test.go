package abi_test

import (
	"encoding/binary"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// TestExported checks the limits and magics that packages bloom and
// snapshot export, for their users, against this package's, which the
// JavaScript side is generated from.
func TestExported(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"bloom.MaxHashes", bloom.MaxHashes, abi.MaxHashes},
		{"bloom.MaxLayers", bloom.MaxLayers, abi.MaxLayers},
		{"bloom.MaxGenerations", bloom.MaxGenerations, abi.MaxGenerations},
		{"bloom.MaxCountPerBit", bloom.MaxCountPerBit, abi.MaxCountPerBit},
		{"bloom.BlockBits", bloom.BlockBits, abi.BlockBits},
		{"snapshot.Magic", snapshot.Magic, abi.ContainerMagic},
		{"snapshot.MaxShards", snapshot.MaxShards, abi.MaxShards},
		{"snapshot.RouteSeed", uint64(snapshot.RouteSeed), uint64(abi.RouteSeed)},
		{"snapshot.DeltaMagic", snapshot.DeltaMagic, abi.DeltaMagic},
		{"snapshot.MaxDeltaBits", snapshot.MaxDeltaBits, abi.MaxDeltaBits},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v; abi says %v", c.name, c.got, c.want)
		}
	}
}

// TestLayouts checks the sizes of the layouts against what bloom and
// snapshot write.
func TestLayouts(t *testing.T) {
	f, _ := bloom.NewWithSize(640, 3)
	if b, _ := f.MarshalBinary(); len(b) != abi.HeaderSize+640/8+abi.ChecksumSize {
		t.Errorf("a record of 640 bits is %d bytes; abi says %d + 80 + %d", len(b), abi.HeaderSize, abi.ChecksumSize)
	}
	if n := len(snapshot.AppendDeltaHeader(nil, 1, 0, 64, 1, 1, 0)); n != abi.DeltaHeader {
		t.Errorf("a delta's header is %d bytes; abi says %d", n, abi.DeltaHeader)
	}
	// The largest position, alone: the coding byte, the parameter, and
	// (2^32-1)>>MaxRiceBits ones, a zero and MaxRiceBits bits.
	r := snapshot.DeltaRecord{To: 1, Positions: []uint64{abi.MaxDeltaBits - 1}}
	want := abi.DeltaRecordHeader + 2 + ((abi.MaxDeltaBits-1)>>abi.MaxRiceBits+1+abi.MaxRiceBits+7)/8
	if n := len(snapshot.AppendDeltaRecord(nil, r)); n != want {
		t.Errorf("a record of position 2^32-1 is %d bytes; want %d", n, want)
	}
	if abi.MaxDeltaBits-1 >= 1<<(7*abi.MaxVarintBytes) {
		t.Errorf("a position below MaxDeltaBits may take more than %d bytes", abi.MaxVarintBytes)
	}
	for _, c := range []struct{ payload, want int }{{0, 0}, {1000, 500}, {2*abi.MaxDeltaBytes + 2, abi.MaxDeltaBytes}} {
		if got := abi.DeltaLimit(c.payload); got != c.want {
			t.Errorf("DeltaLimit(%d): got %d; want %d", c.payload, got, c.want)
		}
	}
}

// TestOffsets reads what bloom and snapshot write at the offsets that the
// JavaScript parsers take from this package, so that a field moved on one
// side fails here.
func TestOffsets(t *testing.T) {
	le := binary.LittleEndian
	check := func(what string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: read %d at abi's offset; want %d", what, got, want)
		}
	}

	f, _ := bloom.NewWithSeed(640, 3, 77)
	rec, _ := f.MarshalBinary()
	check("record version", uint64(rec[abi.RecordAtVersion]), 1)
	check("record kind", uint64(rec[abi.RecordAtKind]), abi.KindClassic)
	check("record seed", le.Uint64(rec[abi.RecordAtSeed:]), 77)
	check("record bits", le.Uint64(rec[abi.RecordAtBits:]), 640)
	check("record hashes", uint64(le.Uint32(rec[abi.RecordAtHashes:])), 3)

	c := snapshot.AppendHeader(nil, []uint64{101, 202, 303})
	router := uint64(len(c) - abi.ContainerHeader - 8*3)
	check("container version", uint64(c[abi.ContainerAtVersion]), abi.ContainerVersion)
	check("container routing", uint64(c[abi.ContainerAtRouting]), abi.ContainerRouting)
	check("container reserved", uint64(le.Uint16(c[abi.ContainerAtReserved:])), 0)
	check("container shards", uint64(le.Uint32(c[abi.ContainerAtShards:])), 3)
	check("container reserved 2", uint64(le.Uint32(c[abi.ContainerAtReserved2:])), 0)
	for i, want := range []uint64{router, 101, 202, 303} {
		check("container length", le.Uint64(c[abi.ContainerAtLengths+8*i:]), want)
	}
	check("container header", uint64(abi.ContainerAtLengths+8), abi.ContainerHeader)

	d := snapshot.AppendDeltaHeader(nil, 11, 22, 33, 44, 55, 66)
	check("delta version", uint64(d[abi.DeltaAtVersion]), abi.DeltaVersion)
	check("delta kind", uint64(d[abi.DeltaAtKind]), abi.KindClassic)
	check("delta reserved", uint64(le.Uint16(d[abi.DeltaAtReserved:])), 0)
	check("delta generation", le.Uint64(d[abi.DeltaAtGeneration:]), 11)
	check("delta seed", le.Uint64(d[abi.DeltaAtSeed:]), 22)
	check("delta bits", le.Uint64(d[abi.DeltaAtBits:]), 33)
	check("delta hashes", uint64(le.Uint32(d[abi.DeltaAtHashes:])), 44)
	check("delta shards", uint64(le.Uint32(d[abi.DeltaAtShards:])), 55)
	check("delta records", uint64(le.Uint32(d[abi.DeltaAtRecords:])), 66)
	check("delta reserved 2", uint64(le.Uint32(d[abi.DeltaAtReserved2:])), 0)
	check("delta header", uint64(abi.DeltaAtReserved2+4), abi.DeltaHeader)

	r := snapshot.AppendDeltaRecord(nil, snapshot.DeltaRecord{Shard: 7, Epoch: 8, From: 9, To: 10, Count: 12, Positions: []uint64{1, 300}})
	check("record shard", uint64(le.Uint32(r[abi.DeltaRecordAtShard:])), 7)
	check("record epoch", uint64(le.Uint32(r[abi.DeltaRecordAtEpoch:])), 8)
	check("record from", le.Uint64(r[abi.DeltaRecordAtFrom:]), 9)
	check("record to", le.Uint64(r[abi.DeltaRecordAtTo:]), 10)
	check("record count", le.Uint64(r[abi.DeltaRecordAtCount:]), 12)
	check("record positions", uint64(le.Uint32(r[abi.DeltaRecordAtPositions:])), 2)
	check("record bytes", uint64(le.Uint32(r[abi.DeltaRecordAtBytes:])), uint64(len(r)-abi.DeltaRecordHeader))
	check("record header", uint64(abi.DeltaRecordAtBytes+4), abi.DeltaRecordHeader)
}
