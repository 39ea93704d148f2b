//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bloom

import (
	"os"
	"syscall"
)

// openWriter opens path for reading and writing, with flag added, and takes
// an exclusive flock on it without waiting. The lock belongs to the open
// file: it ends when the file is closed or the process ends, however it
// ends.
func openWriter(path string, flag int) (*os.File, error) {
	file, err := os.OpenFile(path, os.O_RDWR|flag, 0o666)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		file.Close()
		if err == syscall.EWOULDBLOCK {
			return nil, wrap(ErrLocked, path)
		}
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return file, nil
}

// mapFile maps the first size bytes of file, shared, so that stores reach
// the file.
func mapFile(file *os.File, size int, writable bool) ([]byte, error) {
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	return syscall.Mmap(int(file.Fd()), 0, size, prot, syscall.MAP_SHARED)
}

func unmapFile(data []byte) error { return syscall.Munmap(data) }
