package bloom

import (
	"os"
	"syscall"
)

// reserve makes file size bytes long with its blocks allocated
// (fallocate), so that a full disk or quota is an error now rather than a
// SIGBUS when a mapped page is first written. File systems without
// fallocate get zeros written instead.
func reserve(file *os.File, size int64) error {
	var err error
	for {
		err = syscall.Fallocate(int(file.Fd()), 0, 0, size)
		if err != syscall.EINTR {
			break
		}
	}
	switch err {
	case nil:
		return nil
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		return writeZeros(file, size)
	}
	return &os.PathError{Op: "fallocate", Path: file.Name(), Err: err}
}
