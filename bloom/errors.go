package bloom

import (
	"errors"
	"strconv"
)

// Errors returned by the decoders. Each is wrapped with detail; test with
// errors.Is. Truncated input yields io.ErrUnexpectedEOF unchanged.
var (
	// ErrNotFilter means the input does not start with the format's magic.
	ErrNotFilter = errors.New("bloom: not an edgebloom filter")
	// ErrVersion means the format version or hash scheme is not one this
	// package reads.
	ErrVersion = errors.New("bloom: unsupported format version")
	// ErrKind means the input holds another kind of filter than the one
	// asked for.
	ErrKind = errors.New("bloom: wrong filter kind")
	// ErrCorrupt means the header is inconsistent with itself or with the
	// payload length.
	ErrCorrupt = errors.New("bloom: corrupt filter")
	// ErrChecksum means the bytes do not match their checksum.
	ErrChecksum = errors.New("bloom: checksum mismatch")
	// ErrTooLarge means the filter is larger than the caller's bound.
	ErrTooLarge = errors.New("bloom: filter exceeds the size bound")
	// ErrIncompatible means two filters differ in size, hash functions,
	// hash scheme or seed, so they cannot be combined.
	ErrIncompatible = errors.New("bloom: incompatible filters")
)

// detailError adds context to one of the sentinel errors above.
type detailError struct {
	base   error
	detail string
}

func (e *detailError) Error() string { return e.base.Error() + ": " + e.detail }
func (e *detailError) Unwrap() error { return e.base }

// wrap and argError are never inlined: their errors are the rare path, and
// a copy at each of their call sites made the wasm larger (docs/size.md,
// "What each choice saves").
//
//go:noinline
func wrap(base error, detail string) error { return &detailError{base, detail} }

// An ArgError reports an invalid argument to a constructor.
type ArgError struct {
	Arg  string // the argument's name, as in the function's signature
	Rule string // what the argument must satisfy
}

func (e *ArgError) Error() string { return "bloom: invalid " + e.Arg + ": " + e.Rule }

//go:noinline
func argError(arg, rule string) error { return &ArgError{Arg: arg, Rule: rule} }

// utoa formats v in decimal for an error message. It is never inlined: a
// copy of strconv's fast path at each of its call sites made the wasm
// larger (docs/size.md, "What each choice saves").
//
//go:noinline
func utoa(v uint64) string { return strconv.FormatUint(v, 10) }
