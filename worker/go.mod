module github.com/edgebloom/edgebloom/worker

// The Cloudflare Worker is its own module so that importers of the library
// never pull in github.com/syumai/workers.

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/edgebloom/edgebloom v0.1.0
	github.com/edgebloom/edgebloom/urlkey v0.1.0
	github.com/syumai/workers v0.33.0
)

require (
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)
