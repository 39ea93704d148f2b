module github.com/edgebloom/edgebloom/bench

go 1.24

require (
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/edgebloom/edgebloom v0.0.0
	github.com/greatroar/blobloom v0.8.1
)

require github.com/bits-and-blooms/bitset v1.24.2 // indirect

replace github.com/edgebloom/edgebloom => ../
