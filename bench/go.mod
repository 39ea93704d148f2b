module github.com/edgebloom/edgebloom/bench

go 1.24.0

require (
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/edgebloom/edgebloom v0.1.0
	github.com/greatroar/blobloom v0.8.1
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/edgebloom/edgebloom/redisfilter v0.1.0
)
