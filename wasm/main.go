//go:build js && wasm

// Command wasm is the edgebloom npm module's engine: package bloom compiled
// to WebAssembly and exposed through //go:wasmexport functions.
//
// A call through syscall/js costs about 25 µs; an exported function costs
// well under 0.1 µs. So no key ever crosses as a JS value: the JS side writes
// keys as UTF-8 into a scratch buffer in linear memory and passes handles,
// offsets and lengths.
//
// There are two kinds of export. The hot ones, key and keys (wasm/hot.go),
// run once a key or a batch; they are panic-free by construction: every
// index is checked before use and they never allocate, so they need no
// deferred recover, which costs about 100 ns a call in Go's wasm. Everything
// else goes through eb, one export with an operation code (each export costs
// a few kB of wasm), which can allocate and decode, and so recovers from
// panics. All return a status, negative on error with the message kept for
// opErrorPtr/opErrorLen. Should the Go program exit anyway, the JS side
// notices (go.exited) and refuses every later call.
package main

import (
	"errors"
	"io"
	"runtime"
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
)

// Status codes returned by the exports. The JS side maps them to errors.
const (
	errArg          = -1 // an argument is out of range (RangeError)
	errHandle       = -2 // no live filter has this handle
	errIncompatible = -3
	errNotFilter    = -4
	errVersion      = -5
	errKind         = -6
	errCorrupt      = -7
	errChecksum     = -8
	errTooLarge     = -9
	errTruncated    = -10
	errInternal     = -11
	errUnsupported  = -12 // the operation does not apply to this kind
	errSplit        = -13 // a batch's text splits a UTF-8 sequence between keys (the caller retries key by key)
)

// Kinds, as in the format: passed to opNew, returned by opInspect.
const (
	kindClassic  = 1
	kindCounting = 2
	kindScalable = 3
	kindWindow   = 4
	kindBlocked  = 5
)

// maxBits bounds every filter made or loaded here: 2^32 bits is a 512 MiB
// bitset, an eighth of the 4 GiB that wasm32 can address.
const maxBits = 1 << 32

// filter is what every kind offers.
type filter interface {
	Add([]byte) bool
	Has([]byte) bool
	NumBits() uint64
	Count() uint64
	Capacity() uint64
	TargetFPR() float64
	Clear()
	EncodedSize() uint64
	WriteTo(io.Writer) (int64, error)
	Stats() bloom.Stats // every statistic from one pass over the bits
	// For keys hashed in pieces (digest.go).
	Seed() uint64
	AddDigest(uint64) bool
	HasDigest(uint64) bool
}

var (
	// filters[h-1] is the filter with handle h. Freed handles are reused,
	// so the table stays as large as the most filters alive at once.
	filters []filter
	unused  []int32

	scratch []byte // keys in, results out; grows, never shrinks
	output  []byte // the last encoding, until opOutputRelease
	errMsg  []byte // the message of the last error
)

func main() {
	// The hot exports report errors through fail without allocating.
	errMsg = make([]byte, 0, 256)
	select {} // the exports serve calls for as long as the instance lives
}

// fail records err's message and returns its status code. It is never
// inlined: a copy at each of its call sites made the wasm 10 kB larger.
//
//go:noinline
func fail(code int32, msg string) int32 {
	errMsg = append(errMsg[:0], msg...)
	return code
}

func failErr(err error) int32 {
	if _, ok := err.(*bloom.ArgError); ok {
		return fail(errArg, err.Error())
	}
	// errors.Is and errors.As would link reflection, about 100 kB of wasm;
	// the bloom errors wrap at most once, so Unwrap is enough.
	base := err
	if u := errors.Unwrap(err); u != nil {
		base = u
	}
	code := int32(errInternal)
	switch base {
	case bloom.ErrIncompatible:
		code = errIncompatible
	case bloom.ErrNotFilter:
		code = errNotFilter
	case bloom.ErrVersion:
		code = errVersion
	case bloom.ErrKind:
		code = errKind
	case bloom.ErrCorrupt:
		code = errCorrupt
	case bloom.ErrChecksum:
		code = errChecksum
	case bloom.ErrTooLarge:
		code = errTooLarge
	case io.ErrUnexpectedEOF:
		return fail(errTruncated, "bloom: truncated filter")
	}
	return fail(code, err.Error())
}

// guard turns a panic into errInternal. Every export defers it.
func guard(status *int32) {
	if r := recover(); r != nil {
		msg := "internal error"
		if e, ok := r.(error); ok {
			msg += ": " + e.Error()
		} else if s, ok := r.(string); ok {
			msg += ": " + s
		}
		*status = fail(errInternal, msg)
	}
}

func ptr(b []byte) uint32 {
	if cap(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// register is never inlined: each inlined copy took about 0.3 kB of wasm.
//
//go:noinline
func register(f filter) int32 {
	if n := len(unused); n > 0 {
		h := unused[n-1]
		unused = unused[:n-1]
		filters[h-1] = f
		return h
	}
	filters = append(filters, f)
	return int32(len(filters))
}

func lookup(h int32) filter {
	if h < 1 || int(h) > len(filters) {
		return nil
	}
	return filters[h-1]
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// Operation codes of eb. Arguments are named after the parameters of eb.
const (
	opScratch       = 0  // make scratch at least a bytes; returns its address
	opErrorPtr      = 1  // address of the last error message
	opErrorLen      = 2  // length of the last error message
	opNew           = 3  // kind a; capacity x and rate y, or bits x and hashes y (blocked: blocks x) when b is 1, blocked by ParquetBlocks(x, y) when b is 2; generations c (window); returns a handle
	opFree          = 4  // free filter h
	opRemove        = 7  // remove key scratch[a:a+b] from a counting filter
	opPositions     = 10 // positions of key scratch[a:a+b] as float64 at c; returns k
	opStats         = 11 // write the stats of h as float64 at a (see stat*)
	opUnion         = 12 // union filter a into h
	opIntersect     = 13 // intersect h with filter a
	opEqual         = 14 // 1 when h and a have equal parameters and contents
	opClear         = 15 // clear h
	opEncode        = 16 // encode h into the output buffer; returns its length
	opOutputPtr     = 17 // address of the output buffer
	opOutputRelease = 18 // drop the output buffer
	opInspect       = 19 // check the header at scratch[0:64] for an input of a bytes and bound x; returns the kind
	opDecode        = 20 // decode scratch[0:a] bounded by x; returns a handle
	opLive          = 21 // number of live filters
	opRotate        = 22 // rotate window h
	opCrash         = 23 // exit the Go program as a panic outside recover would (tests use it)
	opFromParquet   = 24 // a blocked filter from the Parquet bitset scratch[0:a] bounded by x; returns a handle
	opParams        = 25 // write the constant-time stats of h as float64 at a, the others 0
	opAddChanges    = 26 // add a keys (lengths at b, text scratch[c:d]) to classic h; positions set to the output buffer
	opApplyChanges  = 27 // set the b positions (uint32) at scratch[a:] in classic h, and its count to x
	opReadBytes     = 28 // copy bytes [x, y) of classic h's encoding to scratch[0:]
	opWritePayload  = 29 // write scratch[0:a] to classic h's payload from byte x
	opDigest        = 41 // hash a key of h in pieces: start (a 0), scratch[b:b+c] (a 1), end (a 2: add when b is 1, test when 0)
)

// Stats written by opStats, in this order.
const (
	statBits = iota
	statHashes
	statCount
	statSetBits
	statEstimatedCount
	statFillRatio
	statEstimatedFPR
	statCapacity
	statTargetFPR
	statOverCapacity
	statKind
	statLayers
	statEncodedSize
	numStats
)

// eb performs operation op. See the op constants for what the arguments
// mean; addresses returned by opScratch, opErrorPtr and opOutputPtr are
// unsigned and must be read as such. Memory may grow during any call, so the
// caller re-reads memory.buffer afterwards.
//
//go:wasmexport eb
func eb(op, h, a, b, c, d, e int32, x, y float64) (status int32) {
	if op == opCrash {
		// Before the deferred recover: the panic ends the program, which
		// is how tests make sure the JS side then refuses every call.
		panic("edgebloom: engine stopped by request")
	}
	defer guard(&status)
	switch op {
	case opScratch:
		if len(scratch) < int(uint32(a)) {
			scratch = make([]byte, max(int(uint32(a)), 2*len(scratch), 64<<10))
		}
		return int32(ptr(scratch))
	case opErrorPtr:
		return int32(ptr(errMsg))
	case opErrorLen:
		return int32(len(errMsg))
	case opNew:
		return newFilter(a, b == 1, b == 2, c, x, y, d)
	case opOutputPtr:
		return int32(ptr(output))
	case opOutputRelease:
		output = nil
		return 0
	case opInspect:
		return inspect(uint32(a), x)
	case opDecode:
		return decode(uint32(a), x)
	case opLive:
		return int32(len(filters) - len(unused))
	case opFromParquet:
		return fromParquet(uint32(a), x)
	}
	f := lookup(h)
	if f == nil {
		return fail(errHandle, "edgebloom: the filter was freed")
	}
	switch op {
	case opFree:
		filters[h-1] = nil
		unused = append(unused, h)
		// Linear memory never shrinks, and Go's collector lets the heap
		// reach twice its live size before it runs. Collecting at once when
		// a filter of 64 KiB or more goes makes its memory reusable by the
		// next one, so linear memory stays at what is live, not twice that
		// (a collection of a few MB of bitsets takes well under 1 ms).
		if f.EncodedSize() >= 64<<10 {
			runtime.GC()
		}
		return 0
	case opRemove:
		k, ok := span(a, b)
		if !ok {
			return fail(errArg, "edgebloom: key outside the scratch buffer")
		}
		if c, ok := f.(*bloom.CountingFilter); ok {
			return b2i(c.Remove(k))
		}
		return fail(errUnsupported, "edgebloom: remove needs a counting filter")
	case opPositions:
		return positions(f, a, b, uint32(c))
	case opStats:
		return stats(f, uint32(a))
	case opParams:
		return params(f, uint32(a))
	case opAddChanges:
		return addChanges(f, uint32(a), uint32(b), uint32(c), uint32(d))
	case opApplyChanges:
		return applyChanges(f, uint32(a), uint32(b), x)
	case opReadBytes:
		return readBytes(f, x, y)
	case opWritePayload:
		return writePayload(f, uint32(a), x)
	case opUnion, opIntersect, opEqual:
		return combine(op, f, a)
	case opClear:
		f.Clear()
		return 0
	case opEncode:
		return encode(f)
	case opDigest:
		return digestOp(f, a, b, c)
	case opRotate:
		if w, ok := f.(*bloom.WindowFilter); ok {
			w.Rotate()
			return 0
		}
		return fail(errUnsupported, "edgebloom: rotate needs a window filter")
	}
	return fail(errArg, "edgebloom: unknown operation")
}

// span returns scratch[off:off+n] after checking the range.
func span(off, n int32) ([]byte, bool) {
	lo, hi := uint64(uint32(off)), uint64(uint32(off))+uint64(uint32(n))
	if hi > uint64(len(scratch)) {
		return nil, false
	}
	return scratch[lo:hi], true
}

// newFilter makes a filter of kind sized by (capacity a, rate b), or by
// explicit (bits, hashes) or blocks; parquet sizes a blocked filter by
// ParquetBlocks instead, a power of two.
//
// room is what the engine's memory budget has left, in KiB: the JS side
// keeps the budget (js/core.js), and a filter that would pass it is refused
// before it is allocated.
func newFilter(kind int32, explicit, parquet bool, gens int32, a, b float64, room int32) int32 {
	var f filter
	var err error
	// Sizes are checked against maxBits before anything is allocated.
	size := a
	if !explicit {
		m, _, e := bloom.Optimal(uint64(a), b)
		switch kind {
		case kindScalable:
			m, _, e = bloom.Optimal(uint64(a), b/2)
		case kindBlocked:
			m, e = bloom.OptimalBlocks(uint64(a), b)
			if parquet {
				m, e = bloom.ParquetBlocks(uint64(a), b)
			}
		}
		if e != nil {
			return failErr(e)
		}
		size = float64(m)
	}
	if kind == kindBlocked { // sized in blocks
		size *= bloom.BlockBits
	}
	if kind == kindCounting {
		size *= 4
	}
	if kind == kindWindow {
		size *= float64(gens)
	}
	if size > maxBits {
		return fail(errArg, "edgebloom: the filter would need more than 2^32 bits (512 MiB), the limit in WebAssembly")
	}
	if size/8 > 1024*float64(room) {
		return fail(errTooLarge, "edgebloom: the filter does not fit the engine's memory budget (init's memoryLimit)")
	}
	hashes := uint32(min(max(b, 0), 1<<16))
	switch {
	case kind == kindScalable:
		f, err = bloom.NewScalable(uint64(a), b)
	case kind == kindWindow:
		f, err = bloom.NewWindow(uint64(a), b, int(gens))
	case kind == kindClassic && explicit:
		f, err = bloom.NewWithSize(uint64(a), hashes)
	case kind == kindClassic:
		f, err = bloom.New(uint64(a), b)
	case kind == kindCounting && explicit:
		f, err = bloom.NewCountingWithSize(uint64(a), hashes)
	case kind == kindCounting:
		f, err = bloom.NewCounting(uint64(a), b)
	case kind == kindBlocked && explicit:
		f, err = bloom.NewBlockedWithSize(uint64(a))
	case kind == kindBlocked && parquet:
		f, err = bloom.NewBlockedForParquet(uint64(a), b)
	case kind == kindBlocked:
		f, err = bloom.NewBlocked(uint64(a), b)
	default:
		return fail(errArg, "edgebloom: unknown filter kind")
	}
	if err != nil {
		return failErr(err)
	}
	return register(f)
}

func positions(f filter, off, n int32, out uint32) int32 {
	var pos []uint64
	k, ok := span(off, n)
	switch f := f.(type) {
	case *bloom.Filter:
		pos = f.Locations(k)
	case *bloom.CountingFilter:
		pos = f.Locations(k)
	case *bloom.BlockedFilter:
		pos = f.Locations(k)
	default:
		return fail(errUnsupported, "edgebloom: positions need a classic, counting or split-block filter")
	}
	if !ok || out%8 != 0 || uint64(out)+8*uint64(len(pos)) > uint64(len(scratch)) {
		return fail(errArg, "edgebloom: positions outside the scratch buffer")
	}
	dst := unsafe.Slice((*float64)(unsafe.Pointer(&scratch[out])), len(pos))
	for i, p := range pos {
		dst[i] = float64(p)
	}
	return int32(len(pos))
}

func stats(f filter, out uint32) int32 {
	if out%8 != 0 || uint64(out)+8*numStats > uint64(len(scratch)) {
		return fail(errArg, "edgebloom: stats outside the scratch buffer")
	}
	params(f, out)
	s := (*[numStats]float64)(unsafe.Pointer(&scratch[out]))
	// One pass over the bits for all of them (each method passes once).
	st := f.Stats()
	s[statSetBits] = float64(st.SetBits)
	s[statEstimatedCount] = st.EstimatedCount
	s[statFillRatio] = st.FillRatio
	s[statEstimatedFPR] = st.EstimatedFPR
	s[statOverCapacity] = float64(b2i(st.OverCapacity))
	return numStats
}

func combine(op int32, f filter, other int32) int32 {
	g := lookup(other)
	if g == nil {
		return fail(errHandle, "edgebloom: the other filter was freed")
	}
	// The classic and split-block cases are spelled out twice: one generic
	// function for both made the wasm 1.5 kB larger.
	switch x := f.(type) {
	case *bloom.Filter:
		y, ok := g.(*bloom.Filter)
		if !ok {
			break
		}
		var err error
		switch op {
		case opUnion:
			err = x.Union(y)
		case opIntersect:
			err = x.Intersect(y)
		default:
			return b2i(x.Equal(y))
		}
		if err != nil {
			return failErr(err)
		}
		return 0
	case *bloom.BlockedFilter:
		y, ok := g.(*bloom.BlockedFilter)
		if !ok {
			break
		}
		var err error
		switch op {
		case opUnion:
			err = x.Union(y)
		case opIntersect:
			err = x.Intersect(y)
		default:
			return b2i(x.Equal(y))
		}
		if err != nil {
			return failErr(err)
		}
		return 0
	case *bloom.CountingFilter:
		if y, ok := g.(*bloom.CountingFilter); ok && op == opEqual {
			return b2i(x.Equal(y))
		}
	}
	if op == opEqual {
		return 0
	}
	return fail(errIncompatible, "bloom: incompatible filters: union and intersect need two classic or two split-block filters")
}

// sliceWriter appends to a byte slice, like bytes.Buffer without the rest
// of package bytes.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func encode(f filter) int32 {
	w := sliceWriter{make([]byte, 0, f.EncodedSize())}
	if _, err := f.WriteTo(&w); err != nil {
		return failErr(err)
	}
	output = w.b
	return int32(len(output))
}

// inspect checks the header at scratch[0:64] against the whole input length
// n and the bound, before the caller copies the rest in, and returns the
// kind.
func inspect(n uint32, bound float64) int32 {
	if n < bloom.HeaderSize || len(scratch) < bloom.HeaderSize {
		return fail(errTruncated, "bloom: truncated filter")
	}
	info, err := bloom.Inspect(scratch[:bloom.HeaderSize], uint64(min(bound, maxBits)))
	switch {
	case err != nil:
		return failErr(err)
	case info.Size > uint64(n):
		return fail(errTruncated, "bloom: truncated filter")
	case info.Size < uint64(n):
		return fail(errCorrupt, "bloom: corrupt filter: trailing bytes after the filter")
	}
	return int32(scratch[5])
}

// sliceReader reads a byte slice, like bytes.Reader.
type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// decode decodes scratch[0:n], of the kind its header names, and returns a
// new handle.
func decode(n uint32, bound float64) int32 {
	if uint64(n) > uint64(len(scratch)) || n < bloom.HeaderSize {
		return fail(errTruncated, "bloom: truncated filter")
	}
	limit := uint64(min(bound, maxBits))
	r := &sliceReader{scratch[:n]}
	var f filter
	var err error
	switch scratch[5] {
	case kindCounting:
		f, err = bloom.DecodeCounting(r, limit)
	case kindScalable:
		f, err = bloom.DecodeScalable(r, limit)
	case kindWindow:
		f, err = bloom.DecodeWindow(r, limit)
	case kindBlocked:
		f, err = bloom.DecodeBlocked(r, limit)
	default:
		f, err = bloom.Decode(r, limit)
	}
	shrinkScratch()
	switch {
	case err != nil:
		return failErr(err)
	case len(r.b) != 0:
		return fail(errCorrupt, "bloom: corrupt filter: trailing bytes after the filter")
	}
	return register(f)
}

// shrinkScratch drops a scratch buffer of more than 4 MiB, grown for an
// input that is now a filter (or was refused): kept, it would hold a second
// copy of the filter's bytes for good. The JS side (rescratch) does the
// same arithmetic and re-reads the scratch address.
func shrinkScratch() {
	if len(scratch) > 4<<20 {
		scratch = make([]byte, 64<<10)
		runtime.GC()
	}
}

// fromParquet makes a split-block filter from the Parquet bitset
// scratch[0:n], refusing one of more than bound bits.
func fromParquet(n uint32, bound float64) int32 {
	switch {
	case uint64(n) > uint64(len(scratch)):
		return fail(errArg, "edgebloom: bitset outside the scratch buffer")
	case 8*uint64(n) > uint64(min(bound, maxBits)):
		return fail(errTooLarge, "bloom: filter exceeds the size bound")
	}
	f, err := bloom.BlockedFromParquet(scratch[:n])
	shrinkScratch()
	if err != nil {
		return failErr(err)
	}
	return register(f)
}
