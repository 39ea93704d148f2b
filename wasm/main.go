//go:build js && wasm

// Command wasm is the edgebloom npm module's engine: package bloom compiled
// to WebAssembly and exposed through //go:wasmexport functions.
//
// A call through syscall/js goes through the glue's table of JS values and
// costs far more than a call of an exported function (bench/README.md,
// "Figures the code's design rests on"). So no key ever crosses as a JS
// value: the JS side writes keys as UTF-8 into a scratch buffer in linear
// memory and passes handles, offsets and lengths.
//
// There are two kinds of export. The hot ones, key and keys (wasm/hot.go),
// run once a key or a batch; they are panic-free by construction: every index
// is checked before use and they never allocate, so they need no deferred
// recover, which Go's wasm makes costly on every call (bench/README.md).
// Everything else goes through eb, one export with an operation code (each
// export adds to the wasm: docs/size.md), which can allocate and decode, and
// so recovers from panics. All return a status, negative on error with the
// message kept for abi.OpErrorPtr/abi.OpErrorLen. Should the Go program exit
// anyway, the JS side notices (go.exited) and refuses every later call.
package main

import (
	"errors"
	"io"
	"runtime"
	"unsafe"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/internal/budget"
	"github.com/edgebloom/edgebloom/internal/engine"
	"github.com/edgebloom/edgebloom/internal/release"
)

// maxBits bounds every filter made or loaded here (see abi.MaxBits).
const maxBits = abi.MaxBits

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
	Seed() uint64       // for keys hashed in pieces (digest.go)
}

var (
	// filters[h-1] is the filter with handle h. Freed handles are reused,
	// so the table stays as large as the most filters alive at once.
	filters []filter
	unused  []int32

	scratch []byte // keys in, results out; grows, never shrinks
	output  []byte // the last encoding, until abi.OpOutputRelease
	errMsg  []byte // the message of the last error
)

func main() {
	// The hot exports report errors through fail without allocating.
	errMsg = make([]byte, 0, 256)
	select {} // the exports serve calls for as long as the instance lives
}

// fail records err's message and returns its status code. It is never
// inlined: a copy at each of its call sites made the wasm larger
// (docs/size.md, "What each choice saves").
//
//go:noinline
func fail(code int32, msg string) int32 {
	errMsg = append(errMsg[:0], msg...)
	return code
}

func failErr(err error) int32 {
	if _, ok := err.(*bloom.ArgError); ok {
		return fail(abi.ErrArg, err.Error())
	}
	// errors.Is and errors.As would link reflection into the wasm
	// (docs/size.md, "What each choice saves"); the bloom errors wrap at
	// most once, so Unwrap is enough.
	base := err
	if u := errors.Unwrap(err); u != nil {
		base = u
	}
	if base == io.ErrUnexpectedEOF {
		return fail(abi.ErrTruncated, "bloom: truncated filter")
	}
	// One comparison in a loop, not one a case (docs/size.md): the
	// statuses of these errors are consecutive, abi.ErrIncompatible down to
	// abi.ErrTooLarge.
	code := int32(abi.ErrInternal)
	for i, e := range [...]error{
		bloom.ErrIncompatible, bloom.ErrNotFilter, bloom.ErrVersion, bloom.ErrKind,
		bloom.ErrCorrupt, bloom.ErrChecksum, bloom.ErrTooLarge,
	} {
		if base == e {
			code = abi.ErrIncompatible - int32(i)
		}
	}
	return fail(code, err.Error())
}

// guard turns a panic into abi.ErrInternal. Every export defers it.
func guard(status *int32) {
	if r := recover(); r != nil {
		msg := "internal error"
		if e, ok := r.(error); ok {
			msg += ": " + e.Error()
		} else if s, ok := r.(string); ok {
			msg += ": " + s
		}
		*status = fail(abi.ErrInternal, msg)
	}
}

func ptr(b []byte) uint32 {
	if cap(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

// register is never inlined: each inlined copy added to the wasm
// (docs/size.md, "What each choice saves").
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

// abiVersion is the version of the boundary this engine serves (see package
// abi); init() refuses an engine of another version.
//
//go:wasmexport abi
func abiVersion() int32 { return abi.Version }

// eb performs operation op. See the abi.Op constants for what the arguments
// mean; addresses returned by abi.OpScratch, abi.OpErrorPtr and
// abi.OpOutputPtr are unsigned and must be read as such. Memory may grow
// during any call, so the caller re-reads memory.buffer afterwards.
//
//go:wasmexport eb
func eb(op, h, a, b, c, d int32, x, y float64) (status int32) {
	if op == abi.OpCrash {
		// Before the deferred recover: the panic ends the program, which
		// is how tests make sure the JS side then refuses every call.
		panic("edgebloom: engine stopped by request")
	}
	defer guard(&status)
	switch op {
	case abi.OpScratch:
		if b == 1 { // exactly a bytes (at least the smallest), for a load
			if size := max(int(uint32(a)), budget.Scratch); len(scratch) != size {
				scratch = make([]byte, size)
			}
		} else if len(scratch) < int(uint32(a)) {
			scratch = make([]byte, max(int(uint32(a)), 2*len(scratch), 64<<10))
		}
		return int32(ptr(scratch))
	case abi.OpErrorPtr:
		return int32(ptr(errMsg))
	case abi.OpErrorLen:
		return int32(len(errMsg))
	case abi.OpNew:
		return newFilter(a, b == 1, b == 2, c, x, y, d)
	case abi.OpOutputPtr:
		return int32(ptr(output))
	case abi.OpOutputRelease:
		output = nil
		return 0
	case abi.OpInspect:
		return inspect(b, c, x, y)
	case abi.OpDecode:
		return decode(uint32(a), x, y)
	case abi.OpLive:
		return int32(len(filters) - len(unused))
	case abi.OpFromParquet:
		return fromParquet(uint32(a), x)
	case abi.OpOptimalBlocks:
		blocks, err := bloom.OptimalBlocks(uint64(x), y)
		if err != nil {
			return failErr(err)
		}
		return putFloat(float64(blocks))
	case abi.OpBlockedFPR:
		return putFloat(bloom.EstimateBlockedFPR(uint64(x), uint64(y)))
	case abi.OpRelease:
		return int32(copy(scratch, release.Version))
	case abi.OpRouted:
		return routedOp(h, a, b, c)
	}
	f := lookup(h)
	if f == nil {
		return fail(abi.ErrFreed, "edgebloom: the filter was freed")
	}
	switch op {
	case abi.OpFree:
		filters[h-1] = nil
		unused = append(unused, h)
		routedOp(h, 0, 0, 3)
		// Linear memory never shrinks, and Go's collector lets the heap
		// reach twice its live size before it runs. Collecting at once when
		// a filter of 64 KiB or more goes makes its memory reusable by the
		// next one, so linear memory stays at what is live, not twice that
		// (a collection of a heap of a few large bitsets is short: they hold
		// no pointers to scan; bench/README.md, "Figures the code's design
		// rests on").
		if f.EncodedSize() >= 64<<10 {
			runtime.GC()
		}
		return 0
	case abi.OpRemove:
		k, ok := span(a, b)
		if !ok {
			return fail(abi.ErrArg, "edgebloom: key outside the scratch buffer")
		}
		if c, ok := f.(*bloom.CountingFilter); ok {
			return b2i(c.Remove(k))
		}
		return fail(abi.ErrUnsupported, "edgebloom: remove needs a counting filter")
	case abi.OpPositions:
		return positions(f, a, b, uint32(c))
	case abi.OpStats:
		return stats(f, uint32(a))
	case abi.OpParams:
		return params(f, uint32(a))
	case abi.OpAddChanges:
		return addChanges(f, uint32(a), uint32(b), uint32(c), uint32(d))
	case abi.OpApplyChanges:
		return applyChanges(f, uint32(a), uint32(b), x)
	case abi.OpReadBytes:
		return readBytes(f, x, y)
	case abi.OpWritePayload:
		return writePayload(f, uint32(a), x)
	case abi.OpUnion, abi.OpIntersect, abi.OpEqual:
		return combine(op, f, a)
	case abi.OpClear:
		f.Clear()
		return 0
	case abi.OpEncode:
		return encode(f)
	case abi.OpDigest:
		return digestOp(f, a, b, c)
	case abi.OpGrowth:
		if _, ok := f.(*bloom.ScalableFilter); !ok {
			return fail(abi.ErrUnsupported, "edgebloom: growth needs a scalable filter")
		}
		return putFloat(float64(engine.ScalableGrowth(f, uint64(x), uint64(y))))
	case abi.OpRotate:
		if w, ok := f.(*bloom.WindowFilter); ok {
			w.Rotate()
			return 0
		}
		return fail(abi.ErrUnsupported, "edgebloom: rotate needs a window filter")
	}
	return fail(abi.ErrArg, "edgebloom: unknown operation")
}

// putFloat writes v at scratch[0:8], where the JS side reads one number.
func putFloat(v float64) int32 {
	if len(scratch) < 8 {
		return fail(abi.ErrArg, "edgebloom: no scratch buffer")
	}
	*(*float64)(unsafe.Pointer(&scratch[0])) = v
	return 0
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
	// Sizes are checked against maxBits and the budget before anything is
	// allocated: the bytes a filter takes are its encoded size, by bloom's
	// own rules for each kind (engine.NewSize, engine.ScalableSize).
	size := a // bits, counters or blocks
	var bytes uint64
	if !explicit {
		m, _, e := bloom.Optimal(uint64(a), b)
		switch kind {
		case abi.KindScalable:
			bytes, e = engine.ScalableSize(uint64(a), b)
			m = 8 * bytes
		case abi.KindBlocked:
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
	bits := size
	switch kind {
	case abi.KindBlocked:
		bits *= bloom.BlockBits
	case abi.KindCounting:
		bits *= 4
	case abi.KindWindow:
		bits *= float64(gens)
	}
	if bits > maxBits {
		return fail(abi.ErrArg, "edgebloom: the filter would need more than 2^32 bits (512 MiB), the limit in WebAssembly")
	}
	if kind != abi.KindScalable {
		bytes = engine.NewSize(int(kind), uint64(size), int(gens))
	}
	if float64(bytes) > 1024*float64(room) {
		return fail(abi.ErrTooLarge, "edgebloom: the filter does not fit the engine's memory budget (init's memoryLimit)")
	}
	hashes := uint32(min(max(b, 0), 1<<16))
	switch {
	case kind == abi.KindScalable:
		f, err = bloom.NewScalable(uint64(a), b)
	case kind == abi.KindWindow:
		f, err = bloom.NewWindow(uint64(a), b, int(gens))
	case kind == abi.KindClassic && explicit:
		f, err = bloom.NewWithSize(uint64(a), hashes)
	case kind == abi.KindClassic:
		f, err = bloom.New(uint64(a), b)
	case kind == abi.KindCounting && explicit:
		f, err = bloom.NewCountingWithSize(uint64(a), hashes)
	case kind == abi.KindCounting:
		f, err = bloom.NewCounting(uint64(a), b)
	case kind == abi.KindBlocked && explicit:
		f, err = bloom.NewBlockedWithSize(uint64(a))
	case kind == abi.KindBlocked && parquet:
		f, err = bloom.NewBlockedForParquet(uint64(a), b)
	case kind == abi.KindBlocked:
		f, err = bloom.NewBlocked(uint64(a), b)
	default:
		return fail(abi.ErrArg, "edgebloom: unknown filter kind")
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
		return fail(abi.ErrUnsupported, "edgebloom: positions need a classic, counting or split-block filter")
	}
	if !ok || out%8 != 0 || uint64(out)+8*uint64(len(pos)) > uint64(len(scratch)) {
		return fail(abi.ErrArg, "edgebloom: positions outside the scratch buffer")
	}
	dst := unsafe.Slice((*float64)(unsafe.Pointer(&scratch[out])), len(pos))
	for i, p := range pos {
		dst[i] = float64(p)
	}
	return int32(len(pos))
}

func stats(f filter, out uint32) int32 {
	if out%8 != 0 || uint64(out)+8*abi.NumStats > uint64(len(scratch)) {
		return fail(abi.ErrArg, "edgebloom: stats outside the scratch buffer")
	}
	params(f, out)
	s := (*[abi.NumStats]float64)(unsafe.Pointer(&scratch[out]))
	// One pass over the bits for all of them (each method passes once).
	st := f.Stats()
	s[abi.StatSetBits] = float64(st.SetBits)
	s[abi.StatEstimatedCount] = st.EstimatedCount
	s[abi.StatFillRatio] = st.FillRatio
	s[abi.StatEstimatedFPR] = st.EstimatedFPR
	s[abi.StatOverCapacity] = float64(b2i(st.OverCapacity))
	return abi.NumStats
}

func combine(op int32, f filter, other int32) int32 {
	g := lookup(other)
	if g == nil {
		return fail(abi.ErrFreed, "edgebloom: the other filter was freed")
	}
	// The classic and split-block cases are spelled out twice: one generic
	// function for both made the wasm larger (docs/size.md, "What each
	// choice saves").
	switch x := f.(type) {
	case *bloom.Filter:
		y, ok := g.(*bloom.Filter)
		if !ok {
			break
		}
		var err error
		switch op {
		case abi.OpUnion:
			err = x.Union(y)
		case abi.OpIntersect:
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
		case abi.OpUnion:
			err = x.Union(y)
		case abi.OpIntersect:
			err = x.Intersect(y)
		default:
			return b2i(x.Equal(y))
		}
		if err != nil {
			return failErr(err)
		}
		return 0
	case *bloom.CountingFilter:
		if y, ok := g.(*bloom.CountingFilter); ok && op == abi.OpEqual {
			return b2i(x.Equal(y))
		}
	}
	if op == abi.OpEqual {
		return 0
	}
	return fail(abi.ErrIncompatible, "bloom: incompatible filters: union and intersect need two classic or two split-block filters")
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

// inspect checks the header at scratch[0:64] and the bound before the
// caller copies the rest in, as the decoder of kind want (1 to 5; JS
// passes the header's own kind, or classic for a kind the format does not
// have, when any kind will do) checks it. The input's length is not
// checked here: decode reads the record in order, as Go's decoders do, so
// a record cut short or damaged gets the code Go gives it, and JS refuses
// bytes after a whole record. Given the payload's length in words, for a
// kind whose payload is an array of words, once JS has seen that the input
// holds the whole record: it allocates them, JS copies the payload into
// them, and the decode that follows takes them as the filter's when they
// are as many as the header says (engine.Payload); it returns their
// address.
func inspect(want, payload int32, bound, record float64) int32 {
	if _, err := bloom.InspectKind(scratch, uint8(want), loadBound(uint8(want), bound, record)); err != nil {
		return failErr(err)
	}
	if payload > 0 {
		engine.Payload = make([]uint64, uint32(payload))
		return int32(uintptr(unsafe.Pointer(unsafe.SliceData(engine.Payload))))
	}
	return int32(scratch[5])
}

// loadBound returns the bound on the bits of a load of kind: the caller's,
// and no more than a filter of that kind may have for its encoding to be at
// most record bytes, the largest load the memory budget has room for (the
// JS side keeps the budget, js/core.js). The decoders apply it where they
// check maxBits, from the header, so an input that cannot fit is refused
// before anything is copied or read, with ErrTooLarge whatever else is
// wrong with it.
func loadBound(kind uint8, bound, record float64) uint64 {
	if kind < abi.KindClassic || kind > abi.KindBlocked {
		kind = abi.KindClassic // as the decoders dispatch
	}
	return min(uint64(min(bound, maxBits)), budget.Bits(kind, uint64(max(record, 0))))
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
// new handle. n is at most the scratch buffer's length, and JS passes at
// most the record its checked header sizes, which a decoder that succeeds
// reads to its end, and refuses bytes after it itself (js/decode.js). With
// engine.Payload set (inspect, just before), scratch[0:n] is the record
// without its payload, which engine.Payload holds.
func decode(n uint32, bound, record float64) int32 {
	limit := loadBound(scratch[5], bound, record)
	r := &sliceReader{scratch[:n]}
	var f filter
	var err error
	switch scratch[5] {
	case abi.KindCounting:
		f, err = bloom.DecodeCounting(r, limit)
	case abi.KindScalable:
		f, err = bloom.DecodeScalable(r, limit)
	case abi.KindWindow:
		f, err = bloom.DecodeWindow(r, limit)
	case abi.KindBlocked:
		f, err = bloom.DecodeBlocked(r, limit)
	default:
		f, err = bloom.Decode(r, limit)
	}
	held := engine.Payload != nil
	engine.Payload = nil // taken, or refused before it was read
	shrinkScratch()
	if err != nil {
		// A refused payload's words are garbage: collected at once (as
		// OpFree collects), the next load reuses them rather than growing
		// linear memory, which never shrinks.
		if held {
			runtime.GC()
		}
		return failErr(err)
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
		return fail(abi.ErrArg, "edgebloom: bitset outside the scratch buffer")
	case 8*uint64(n) > uint64(min(bound, maxBits)):
		return fail(abi.ErrTooLarge, "bloom: filter exceeds the size bound")
	}
	f, err := bloom.BlockedFromParquet(scratch[:n])
	shrinkScratch()
	if err != nil {
		return failErr(err)
	}
	return register(f)
}
