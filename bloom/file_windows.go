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
	case err == syscall.ERROR_FILE_NOT_FOUND:
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// lockFile does nothing: on Windows the lock is the share mode a file is
// opened with, and a new temporary file has a name nobody else knows.
func lockFile(*os.File, string) error { return nil }

// replaceFile renames tmp to path unless another writer holds path, and
// returns path opened for writing. Windows renames no open file, so tmp is
// closed first, and path is opened again after the rename: another writer
// may take it in between.
func replaceFile(tmp *os.File, path string) (*os.File, error) {
	tmp.Close()
	old, err := openWriter(path, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		old.Close()
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return openWriter(path, 0)
}

// replaceLocked renames tmp over path, whose lock the caller holds in held,
// and returns path opened for writing again (see replaceFile).
func replaceLocked(held, tmp *os.File, path string) (*os.File, error) {
	tmp.Close()
	held.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return openWriter(path, 0)
}

// mapFile does not map on Windows: the payload is read into memory.
func mapFile(*os.File, int, bool) ([]byte, error) { return nil, nil }

func unmapFile([]byte) error { return nil }
