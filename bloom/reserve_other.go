//go:build !js && !wasip1 && !linux

package bloom

import "os"

// reserve makes file size bytes long by writing zeros, so that its blocks
// are allocated: a full disk or quota is an error now rather than a fault
// when a mapped page is first written. (fallocate is Linux's; package
// syscall has no posix_fallocate for the other systems.)
func reserve(file *os.File, size int64) error { return writeZeros(file, size) }
