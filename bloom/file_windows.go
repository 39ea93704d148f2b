package bloom

import (
	"errors"
	"os"
	"syscall"
)

// errSharingViolation is ERROR_SHARING_VIOLATION, which package syscall
// does not name.
const errSharingViolation = syscall.Errno(32)

// openWriter opens path for reading and writing with a share mode that lets
// others read but not write, which is Windows' lock: it ends when the file
// is closed or the process ends.
func openWriter(path string, flag int) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	mode := uint32(syscall.OPEN_EXISTING)
	if flag&os.O_CREATE != 0 {
		mode = syscall.OPEN_ALWAYS
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, syscall.FILE_SHARE_READ, nil, mode, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	switch {
	case errors.Is(err, errSharingViolation):
		return nil, wrap(ErrLocked, path)
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// mapFile does not map on Windows: the payload is read into memory.
func mapFile(*os.File, int, bool) ([]byte, error) { return nil, nil }

func unmapFile([]byte) error { return nil }
