// Package bench compares edgebloom's bloom.Filter with two other Go Bloom
// filters, github.com/bits-and-blooms/bloom/v3 and github.com/greatroar/blobloom,
// on the same crawler-like URLs, ASCII and international. It is its own
// module so that the library's go.mod keeps xxhash as its only dependency.
// The corpora are made here (urls.go, intl.go), for the Go benchmarks and,
// through cmd/corpus, for the JavaScript one (js/bench.mjs); the
// comparisons are in the tests. The side-by-side table comes from
//
//	go test -run TestSideBySide -passes 7 -timeout 0 -v
//
// See README.md for the machine, the commands and the results.
package bench
