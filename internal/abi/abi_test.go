package abi_test

import (
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
	r := snapshot.DeltaRecord{To: 1, Positions: []uint64{1 << 31}}
	if n := len(snapshot.AppendDeltaRecord(nil, r)); n != abi.DeltaRecordHeader+abi.MaxVarintBytes {
		t.Errorf("a record of position 2^31 is %d bytes; abi says %d + %d", n, abi.DeltaRecordHeader, abi.MaxVarintBytes)
	}
	if abi.MaxDeltaBits-1 >= 1<<(7*abi.MaxVarintBytes) {
		t.Errorf("a position below MaxDeltaBits may take more than %d bytes", abi.MaxVarintBytes)
	}
	for _, c := range []struct{ payload, want int }{{0, 0}, {1000, 500}, {4 << 20, abi.MaxDeltaBytes}} {
		if got := abi.DeltaLimit(c.payload); got != c.want {
			t.Errorf("DeltaLimit(%d): got %d; want %d", c.payload, got, c.want)
		}
	}
}
