//go:build !js && !wasip1

// Replacing a file whole, safely: WriteFile and FileLock.Replace write a
// temporary file beside the target (through symbolic links, to where they
// point), flush it and rename it over the target, so that a reader or a
// crash sees the old file or the new one, never a mix. Kept out of the js
// and wasip1 builds with the rest of the file-backed filter (file.go).

package bloom

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// writeTemp makes a file beside path under a temporary name, locked, with
// the mode of the file at path (when there is none, 0666 less the umask, as
// os.Create makes), has fill write it, flushes it to disk, and renames it
// to path unless another writer holds path (ErrLocked). It returns the file, which path now names, still
// locked; on any error the temporary file is removed.
//
// Errors of the temporary file name path, with op as their Op: the
// temporary name means nothing to the caller.
func writeTemp(op, path string, fill func(*os.File) error) (file *os.File, err error) {
	named := path
	if path, err = linkTarget(path); err != nil {
		return nil, renamed(op, named, err)
	}
	tmp, err := createTemp(path)
	if err != nil {
		return nil, renamed(op, named, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			if !errors.Is(err, ErrLocked) {
				err = renamed(op, named, err)
			}
		}
	}()
	if err := lockFile(tmp, tmp.Name()); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
			return nil, err
		}
	}
	if err := fill(tmp); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	return replaceFile(tmp, path)
}

// maxLinks is how many symbolic links linkTarget follows, as Linux's
// path resolution does (40) before it gives ELOOP.
const maxLinks = 40

// linkTarget returns the file that path names, following symbolic links
// of its last element, so that a file reached through a link is replaced
// where it lives and the link stays a link: the temporary file is made
// beside the target, and renamed over it. A path that names nothing, or
// a link to nothing, gives the name to create.
func linkTarget(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil // what does not exist is made; other errors come from the write
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", errors.New("bloom: too many levels of symbolic links")
}

// createTemp makes a new file beside path, named after it, as os.Create
// would make path: mode 0666 less the umask. (os.CreateTemp makes 0600.)
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		file, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) {
			return file, err
		}
	}
}

// renamed makes an *os.PathError of err, which names path.
func renamed(op, path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// writeZeros makes the empty file size bytes long by writing zeros.
func writeZeros(file *os.File, size int64) error {
	zeros := make([]byte, min(size, 1<<20))
	for off := int64(0); off < size; {
		n, err := file.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off)
		off += int64(n)
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes w's encoding (any filter's WriteTo) to path as Create
// makes its files: to a temporary file beside path, flushed to disk, then
// renamed to path, unless another writer (a FileFilter, a FileLock) has
// path open: then it returns an error wrapping ErrLocked and path is left
// as it was. A crash at any moment leaves the old file or the new one,
// whole, never a mix. When path is a symbolic link (or a chain of them),
// the file it names is replaced, where it lives, and the link stays a
// link; so do Create and FileLock.Replace.
func WriteFile(path string, w io.WriterTo) error {
	file, err := writeTemp("write", path, func(file *os.File) error {
		bw := bufio.NewWriterSize(file, 1<<20)
		if _, err := w.WriteTo(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return err
	}
	return file.Close()
}

// A FileLock is the writer lock a FileFilter holds on its file, for
// programs that change a filter file of another kind (read whole, changed
// in memory, written anew) and must exclude every other writer meanwhile:
// FileFilters, WriteFile, Create and other FileLocks all refuse a file that
// a FileLock holds, with ErrLocked.
type FileLock struct {
	path string
	file *os.File
}

// LockFile takes the writer lock of the existing file at path. It returns
// an error wrapping ErrLocked when another writer has the file open. When
// path is a symbolic link, the lock and Replace are the file's it names.
func LockFile(path string) (*FileLock, error) {
	target, err := linkTarget(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	path = target
	file, err := openWriter(path, 0)
	if err != nil {
		return nil, err
	}
	return &FileLock{path: path, file: file}, nil
}

// File returns the locked file, to read it. It must not be written or
// closed.
func (l *FileLock) File() *os.File { return l.file }

// Replace writes w's encoding to a temporary file beside the locked one and
// renames it into its place, as WriteFile does; the lock then holds the new
// file. A crash leaves the old file or the new one.
func (l *FileLock) Replace(w io.WriterTo) error {
	tmp, err := createTemp(l.path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	err = lockFile(tmp, tmp.Name())
	if fi, serr := l.file.Stat(); err == nil && serr == nil {
		err = tmp.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		bw := bufio.NewWriterSize(tmp, 1<<20)
		if _, err = w.WriteTo(bw); err == nil {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		var file *os.File
		if file, err = replaceLocked(l.file, tmp, l.path); file != nil {
			l.file = file
		}
	}
	if err != nil {
		tmp.Close()
		return err
	}
	return nil
}

// Close releases the lock.
func (l *FileLock) Close() error { return l.file.Close() }
