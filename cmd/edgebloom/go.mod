module github.com/edgebloom/edgebloom/cmd/edgebloom

// The CLI is its own module so that the library's go.mod keeps xxhash as its
// only dependency; urlkey brings golang.org/x/net here, not there.

go 1.24.0

require (
	github.com/edgebloom/edgebloom v0.0.0
	github.com/edgebloom/edgebloom/urlkey v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)

replace github.com/edgebloom/edgebloom => ../..

replace github.com/edgebloom/edgebloom/urlkey => ../../urlkey
