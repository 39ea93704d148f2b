//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bloom

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// openWriter opens path for reading and writing, with flag added, and takes
// an exclusive flock on it without waiting. The lock belongs to the open
// file: it ends when the file is closed or the process ends, however it
// ends.
//
// A file replaced by rename while this was opening it (WriteFile, Create
// and FileLock.Replace rename a new file over the old one) would give a
// lock on a file that path no longer names; the lock is taken again on the
// file path names, so that a lock always covers path.
func openWriter(path string, flag int) (*os.File, error) {
	for range 100 {
		file, err := os.OpenFile(path, os.O_RDWR|flag, 0o666)
		if err != nil {
			return nil, err
		}
		if err := lockFile(file, path); err != nil {
			file.Close()
			return nil, err
		}
		held, err := file.Stat()
		if err != nil {
			file.Close()
			return nil, err
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(held, now) {
			return file, nil
		}
		file.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return nil, wrap(ErrLocked, path+" (replaced again and again while it was being opened)")
}

// lockFile takes an exclusive flock on file without waiting.
func lockFile(file *os.File, path string) error {
	var err error
	for {
		err = syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	switch {
	case err == nil:
		return nil
	case err == syscall.EWOULDBLOCK:
		return wrap(ErrLocked, path)
	}
	return &os.PathError{Op: "flock", Path: path, Err: err}
}

// replaceFile renames tmp, a new file that the caller has locked, to path,
// unless another writer holds path: the lock of path is taken first, and
// held across the rename, so that nothing is renamed over a file in use. The
// lock on tmp then covers path, and tmp is returned. It returns ErrLocked,
// and leaves path alone, when a writer holds it.
func replaceFile(tmp *os.File, path string) (*os.File, error) {
	old, err := openWriter(path, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
		old = nil
	case err != nil:
		return nil, err
	}
	err = os.Rename(tmp.Name(), path)
	if old != nil {
		old.Close()
	}
	if err != nil {
		return nil, err
	}
	syncDir(path)
	return tmp, nil
}

// replaceLocked renames tmp, locked by the caller, over path, whose lock
// the caller holds in held; it returns the file that path names now, locked.
func replaceLocked(held, tmp *os.File, path string) (*os.File, error) {
	if err := os.Rename(tmp.Name(), path); err != nil {
		return held, err
	}
	syncDir(path)
	held.Close()
	return tmp, nil
}

// syncDir flushes the directory of path, so that a rename in it survives a
// crash of the machine. Errors are ignored: some file systems refuse fsync
// of a directory, and the rename itself has succeeded.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
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
