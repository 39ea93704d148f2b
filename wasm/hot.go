//go:build js && wasm

package main

import (
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/internal/engine"
)

// The hot exports, key and keys. Neither defers a recover: both check every
// handle and range before they index, and neither allocates, so neither can
// panic. Classic and split-block batches go through engine.Batch, which on
// wasm hashes and probes a group of keys at a time with few calls; one
// classic key goes through engine.Batch to add and Has to test (which stops
// at the first unset bit, where a batch reads every word of its group); one split-block key gets a direct call (a case in key, addKey
// and hasKey); other kinds go through the filter interface. A Go call costs
// more in wasm than natively (arguments and results go through the Go stack
// in linear memory), so key makes as few as it can.

// one and oneOut carry a single key through engine.Batch, which on wasm
// hashes and probes in one function: a call there costs more than the
// slices.
var (
	one    [1]uint32
	oneOut [1]byte
)

// addKey adds k to f, a kind other than classic, and reports whether it
// was new.
func addKey(f filter, k []byte) bool {
	if b, ok := f.(*bloom.BlockedFilter); ok {
		return b.Add(k)
	}
	return f.Add(k)
}

// hasKey reports whether f, a kind other than classic, probably holds k.
func hasKey(f filter, k []byte) bool {
	if b, ok := f.(*bloom.BlockedFilter); ok {
		return b.Has(k)
	}
	return f.Has(k)
}

// key adds (add 1) or tests (add 0) the key scratch[off:off+n] in filter h.
// It returns 1 when the key was new (add) or is probably present (test), 0
// when not, or a negative status.
//
//go:wasmexport key
func key(add, h, off, n int32) int32 {
	f := lookup(h)
	k, ok := span(off, n)
	if f == nil || !ok {
		return badKey(f)
	}
	if c, ok := f.(*bloom.Filter); ok {
		if add == 0 {
			return b2i(c.Has(k)) // stops at the first unset bit; a batch reads the k words of a group
		}
		one[0] = uint32(n)
		engine.Batch(c, k, 0, one[:], oneOut[:], true)
		return int32(oneOut[0])
	}
	if add == 1 {
		return b2i(addKey(f, k))
	}
	return b2i(hasKey(f, k))
}

// keys adds (add 1) or tests (add 0) count keys in filter h and writes one
// result byte a key, as key returns it, at scratch[out:]. The keys' lengths
// in bytes are count little-endian uint32 at scratch[lens:]; the keys lie in
// scratch[text:end], back to back when stride is 0, else key i at
// text + i·stride (a slot of stride bytes each, which the JS side encodes
// each key straight into). It returns count, or a negative status.
//
//go:wasmexport keys
func keys(add, h, count, lens, text, end, out, stride int32) int32 {
	return batch(h, add, uint32(count), uint32(lens), uint32(text), uint32(end), uint32(out), uint32(stride))
}

// badKey is the status of a hot call whose filter or key is not valid.
func badKey(f any) int32 {
	if f == nil {
		return fail(abi.ErrFreed, "edgebloom: the filter was freed")
	}
	return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
}

func batch(h, mode int32, count, lens, keys, end, out, stride uint32) int32 {
	n := uint64(len(scratch))
	if uint64(lens)+4*uint64(count) > n || uint64(out)+uint64(count) > n || keys > end || uint64(end) > n {
		return fail(abi.ErrArg, "edgebloom: batch outside the scratch buffer")
	}
	add := mode&1 == 1
	// From here every index is below len(scratch): the lengths are read
	// through a pointer, without Go's bounds checks. engine.Batch checks
	// each key against the text; other kinds are checked here.
	ls := unsafe.Slice((*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(scratch)), lens)), count)
	text := scratch[keys:end]
	res := scratch[out : out+count]
	f := lookup(h)
	var r any = f
	if mode&abi.KeyRouted != 0 {
		r = nil
		if h >= 1 && int(h) <= len(sets) {
			r = sets[h-1].r // nil once dropped
		}
	}
	if r == nil {
		return badKey(nil)
	}
	switch engine.Batch(r, text, int(stride), ls, res, add) {
	case engine.Done:
		return int32(count)
	case engine.OutOfRange:
		return badKey(r)
	}
	total, over := lengths(ls, stride)
	if stride != 0 && count > 0 {
		total = uint64(count-1)*uint64(stride) + uint64(ls[count-1])
	}
	if (stride != 0 && over) || total > uint64(end-keys) {
		return badKey(f)
	}
	off := uint32(0)
	for i, l := range ls {
		if stride != 0 {
			off = uint32(i) * stride
		}
		k := text[off : off+l : off+l]
		off += l
		var r bool
		if add {
			r = addKey(f, k)
		} else {
			r = hasKey(f, k)
		}
		res[i] = byte(b2i(r))
	}
	return int32(count)
}
