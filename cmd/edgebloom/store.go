package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/edgebloom/edgebloom/bloom"
)

// A filter is what the commands need of every kind of filter.
type filter interface {
	Add(key []byte) bool
	Has(key []byte) bool
	Count() uint64
	NumBits() uint64
	SetBits() uint64
	EstimatedCount() float64
	EstimatedFPR() float64
	OverCapacity() bool
}

// A filterFile is a filter opened from a file. Classic filters are used in
// place through bloom.FileFilter: the file is memory-mapped, and a writer
// holds a lock on it. Other kinds are read into memory and written back
// whole.
type filterFile struct {
	path string
	info bloom.Info
	f    filter
	file *bloom.FileFilter // for classic filters, else nil
}

// access says what a command does with a filter file.
type access int

const (
	readOnly access = iota
	readWrite
)

// inspect reads and checks the header of the filter file at path.
func inspect(path string) (bloom.Info, error) {
	fd, err := os.Open(path)
	if err != nil {
		return bloom.Info{}, err
	}
	defer fd.Close()
	hdr := make([]byte, bloom.HeaderSize)
	n, err := io.ReadFull(fd, hdr)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return bloom.Info{}, fmt.Errorf("%s: not an edgebloom filter (%d bytes, shorter than a header)", path, n)
	case err != nil:
		return bloom.Info{}, err
	}
	info, err := bloom.Inspect(hdr, maxBits)
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, libError(err))
	}
	return info, nil
}

// load opens the filter file at path, of any kind. The caller must call
// close, or save then close when it made changes.
func load(path string, mode access) (*filterFile, error) {
	info, err := inspect(path)
	if err != nil {
		return nil, err
	}
	if info.Kind == "classic" {
		open := bloom.OpenReadOnly
		if mode == readWrite {
			open = bloom.Open
		}
		f, err := open(path)
		if err != nil {
			return nil, fileError(path, err)
		}
		return &filterFile{path: path, info: info, f: f, file: f}, nil
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	r := bufio.NewReaderSize(fd, 1<<20)
	var f filter
	switch info.Kind {
	case "counting":
		f, err = bloom.DecodeCounting(r, maxBits)
	case "scalable":
		f, err = bloom.DecodeScalable(r, maxBits)
	case "window":
		f, err = bloom.DecodeWindow(r, maxBits)
	case "blocked":
		f, err = bloom.DecodeBlocked(r, maxBits)
	default:
		err = fmt.Errorf("%s filters are not supported", info.Kind)
	}
	if err == nil {
		if _, rerr := r.ReadByte(); rerr != io.EOF {
			err = errors.New("trailing bytes after the filter")
		}
	}
	if err != nil {
		return nil, fileError(path, err)
	}
	return &filterFile{path: path, info: info, f: f}, nil
}

// fileError describes an error of reading the filter file at path.
func fileError(path string, err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("truncated")
	case errors.Is(err, bloom.ErrLocked):
		err = bloom.ErrLocked // its detail is the path again
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err // it names the file already
	}
	return fmt.Errorf("%s: %w", path, libError(err))
}

// save makes the changes to the filter durable: Sync for a file-backed
// filter, else the whole filter written anew.
func (ff *filterFile) save() error {
	if ff.file != nil {
		return libError(cmp.Or(ff.file.Err(), ff.file.Sync()))
	}
	return writeFileAtomic(ff.path, ff.f.(io.WriterTo))
}

// close releases the file and its lock; it is the end of a read.
func (ff *filterFile) close() error {
	if ff.file != nil {
		return libError(ff.file.Close())
	}
	return nil
}

// writeFileAtomic writes f's encoding to a temporary file beside path and
// renames it into place, so that a crash leaves either the old file or the
// new one, never half of one.
func writeFileAtomic(path string, f io.WriterTo) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	mode := os.FileMode(0o644)  // CreateTemp makes 0600; keep the old file's mode
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	err = tmp.Chmod(mode)
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err == nil {
		_, err = f.WriteTo(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
