module github.com/edgebloom/edgebloom/cmd/edgebloom

// The CLI is its own module so that the library's go.mod keeps xxhash as its
// only dependency; urlkey brings golang.org/x/net here, and redisfilter
// github.com/redis/go-redis/v9, not there.

go 1.24.0

require (
	github.com/edgebloom/edgebloom v0.1.0
	github.com/edgebloom/edgebloom/redisfilter v0.1.0
	github.com/edgebloom/edgebloom/urlkey v0.1.0
	github.com/redis/go-redis/v9 v9.22.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)
