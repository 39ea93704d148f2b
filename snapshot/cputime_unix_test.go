//go:build unix

package snapshot

import "syscall"

// cpuTime returns the CPU time the process has used, user and system, in
// nanoseconds: on a machine shared with other work, the benchmarks report
// it beside the wall time, which counts the time waited for a core.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
