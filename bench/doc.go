// Package bench compares edgebloom's bloom.Filter with two other Go Bloom
// filters, github.com/bits-and-blooms/bloom/v3 and github.com/greatroar/blobloom,
// on the same crawler-like URLs. It is its own module so that the library's
// go.mod keeps xxhash as its only dependency. Everything is in the tests:
//
//	go test -run '^$' -bench . -benchtime 3x -count 5
//
// See README.md for the machine, the commands and the results.
package bench
