//go:build !unix

package snapshot

// cpuTime is 0 where getrusage is missing: the benchmarks report wall
// time only.
func cpuTime() int64 { return 0 }
