//go:build js && wasm

package main

import (
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
)

// The operations that let a classic filter be kept elsewhere at the cost of
// what changes (see bloom/changes.go): a batch add that reports the bits it
// set, setting them again, and reading or writing byte ranges of the
// encoding without encoding the filter. Statistics: params gives the ones
// that take constant time, stats the rest from one pass over the bits.

// classic returns filter h as a classic filter, or a status.
func classic(f filter) (*bloom.Filter, int32) {
	if c, ok := f.(*bloom.Filter); ok {
		return c, 0
	}
	return nil, fail(abi.ErrUnsupported, "edgebloom: this operation needs a classic filter")
}

// params writes the statistics that take constant time (no pass over the
// bits) at scratch[out:], in the layout of stats; the others are 0.
func params(f filter, out uint32) int32 {
	if out%8 != 0 || uint64(out)+8*abi.NumStats > uint64(len(scratch)) {
		return fail(abi.ErrArg, "edgebloom: params outside the scratch buffer")
	}
	s := (*[abi.NumStats]float64)(unsafe.Pointer(&scratch[out]))
	*s = [abi.NumStats]float64{}
	s[abi.StatBits] = float64(f.NumBits())
	s[abi.StatCount] = float64(f.Count())
	s[abi.StatCapacity] = float64(f.Capacity())
	s[abi.StatTargetFPR] = f.TargetFPR()
	s[abi.StatEncodedSize] = float64(f.EncodedSize())
	s[abi.StatLayers] = 1
	switch f := f.(type) {
	case *bloom.Filter:
		s[abi.StatKind], s[abi.StatHashes] = abi.KindClassic, float64(f.NumHashes())
	case *bloom.CountingFilter:
		s[abi.StatKind], s[abi.StatHashes] = abi.KindCounting, float64(f.NumHashes())
	case *bloom.ScalableFilter:
		s[abi.StatKind], s[abi.StatLayers] = abi.KindScalable, float64(f.Layers())
	case *bloom.WindowFilter:
		s[abi.StatKind], s[abi.StatHashes], s[abi.StatLayers] = abi.KindWindow, float64(f.NumHashes()), float64(f.Generations())
	case *bloom.BlockedFilter:
		s[abi.StatKind], s[abi.StatHashes] = abi.KindBlocked, float64(f.NumHashes())
	}
	return abi.NumStats
}

// addChanges adds count keys, laid out as for keys with byte lengths, to
// classic filter h, writes a result byte a key at scratch[0:count], and
// leaves the positions of the bits that turned on in the output buffer as
// little-endian uint32 (positions of a filter of at most 2^32 bits). It
// returns the number of positions.
func addChanges(f filter, count, lens, text, end uint32) int32 {
	c, st := classic(f)
	if c == nil {
		return st
	}
	n := uint64(len(scratch))
	if uint64(lens)+4*uint64(count) > n || uint64(count) > uint64(lens) || text > end || uint64(end) > n {
		return fail(abi.ErrArg, "edgebloom: batch outside the scratch buffer")
	}
	ls := unsafe.Slice((*uint32)(unsafe.Pointer(&scratch[lens])), count)
	var total uint64
	for _, l := range ls {
		total += uint64(l)
	}
	if total > uint64(end-text) {
		return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
	}
	pos := changed[:0]
	keys := scratch[text:end]
	for i, l := range ls {
		var fresh bool
		pos, fresh = c.AddChanges(keys[:l:l], pos)
		keys = keys[l:]
		scratch[i] = byte(b2i(fresh))
	}
	changed = pos[:0]
	output = make([]byte, 4*len(pos))
	for i, p := range pos {
		*(*uint32)(unsafe.Pointer(&output[4*i])) = uint32(p)
	}
	return int32(len(pos))
}

// changed is addChanges' list of positions, kept to be reused.
var changed []uint64

// applyChanges sets the n bits whose positions are the little-endian uint32
// at scratch[at:], and the count, in classic filter h.
func applyChanges(f filter, at, n uint32, count float64) int32 {
	c, st := classic(f)
	if c == nil {
		return st
	}
	if uint64(at)+4*uint64(n) > uint64(len(scratch)) || !(count >= 0 && count < 1<<63) {
		return fail(abi.ErrArg, "edgebloom: changes outside the scratch buffer, or a count out of range")
	}
	pos := changed[:0]
	for i := range n {
		pos = append(pos, uint64(*(*uint32)(unsafe.Pointer(&scratch[at+4*i]))))
	}
	changed = pos[:0]
	if err := c.ApplyChanges(pos, uint64(count)); err != nil {
		return failErr(err)
	}
	return 0
}

// readBytes copies bytes [lo, hi) of classic filter h's encoding to
// scratch[0:hi-lo] (Filter.ReadAt: no copy of the filter).
func readBytes(f filter, lo, hi float64) int32 {
	c, st := classic(f)
	if c == nil {
		return st
	}
	size := float64(c.EncodedSize())
	if !(lo >= 0 && lo <= hi && hi <= size) || hi-lo > float64(len(scratch)) {
		return fail(abi.ErrArg, "edgebloom: the range must lie inside the encoding and fit the scratch buffer")
	}
	a, b := uint64(lo), uint64(hi)
	c.ReadAt(scratch[:b-a], int64(a))
	return int32(b - a)
}

// writePayload writes scratch[0:n] to the payload of classic filter h
// from byte off of the payload.
func writePayload(f filter, n uint32, off float64) int32 {
	c, st := classic(f)
	if c == nil {
		return st
	}
	if uint64(n) > uint64(len(scratch)) || !(off >= 0 && off <= float64(c.PayloadSize())) {
		return fail(abi.ErrArg, "edgebloom: the bytes must lie inside the payload")
	}
	if _, err := c.WritePayloadAt(scratch[:n], int64(off)); err != nil {
		return failErr(err)
	}
	return 0
}
