module github.com/edgebloom/edgebloom

// The library depends on xxhash alone. Tools, peers and the Worker live in
// their own modules (bench/, worker/) so importers never pull them in.

go 1.24

require github.com/cespare/xxhash/v2 v2.3.0
