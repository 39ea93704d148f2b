module github.com/edgebloom/edgebloom/redisfilter

// The Redis filter is its own module so that the library's go.mod keeps
// xxhash as its only dependency; go-redis comes in here, not there.

go 1.24.0

require (
	github.com/edgebloom/edgebloom v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
