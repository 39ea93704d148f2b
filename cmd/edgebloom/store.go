package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// A filter is what the commands need of every kind of filter.
type filter interface {
	Add(key []byte) bool
	AddMany(keys [][]byte, dst []bool) []bool
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
// holds a lock on it. Other kinds are read into memory and, by a writer,
// written back whole under the same lock (bloom.FileLock), which holds the
// file from before it is read until after the new one is renamed into
// place.
type filterFile struct {
	path string
	info bloom.Info
	f    filter
	file *bloom.FileFilter // for classic filters, else nil
	lock *bloom.FileLock   // for other kinds opened for writing, else nil
}

// access says what a command does with a filter file.
type access int

const (
	readOnly access = iota
	readWrite
)

// inspect reads and checks the header of the filter file at path, and
// checks the file's length against it.
func inspect(path string) (bloom.Info, error) {
	fd, err := os.Open(path)
	if err != nil {
		return bloom.Info{}, err
	}
	defer fd.Close()
	return inspectFile(fd, path)
}

// inspectFile is inspect on the open file fd. A file whose length is not
// the one its header gives is refused here, before anything maps or reads
// it: a mapping past the end of a file faults.
func inspectFile(fd *os.File, path string) (bloom.Info, error) {
	hdr := make([]byte, bloom.HeaderSize)
	n, err := fd.ReadAt(hdr, 0)
	switch {
	case err == io.EOF:
		return bloom.Info{}, fmt.Errorf("%s: not an edgebloom filter (%d bytes, shorter than a header)", path, n)
	case err != nil:
		return bloom.Info{}, err
	}
	info, err := bloom.Inspect(hdr, maxBits)
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, libError(err))
	}
	st, err := fd.Stat()
	switch {
	case err != nil:
		return info, err
	case uint64(st.Size()) < info.Size:
		return info, fmt.Errorf("%s: truncated: the file is %d bytes, its header says %d", path, st.Size(), info.Size)
	case uint64(st.Size()) > info.Size:
		return info, fmt.Errorf("%s: the file is %d bytes, its header says %d: trailing bytes after the filter", path, st.Size(), info.Size)
	}
	return info, nil
}

// load opens the filter file at path, of any kind. The caller must call
// close, or save then close when it made changes.
func load(path string, mode access) (*filterFile, error) {
	if sharded, err := isSharded(path); err != nil {
		return nil, err
	} else if sharded {
		return loadSharded(path, mode)
	}
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
	ff := &filterFile{path: path}
	var fd *os.File
	if mode == readWrite {
		if ff.lock, err = bloom.LockFile(path); err != nil {
			return nil, fileError(path, err)
		}
		fd = ff.lock.File()
		// What is read is the file locked, which a writer may have
		// replaced since inspect.
		if info, err = inspectFile(fd, path); err != nil {
			ff.close()
			return nil, err
		}
	} else if fd, err = os.Open(path); err != nil {
		return nil, err
	} else {
		defer fd.Close()
	}
	ff.info = info
	r := bufio.NewReaderSize(io.NewSectionReader(fd, 0, int64(info.Size)+1), 1<<20)
	switch info.Kind {
	case "counting":
		ff.f, err = bloom.DecodeCounting(r, maxBits)
	case "scalable":
		ff.f, err = bloom.DecodeScalable(r, maxBits)
	case "window":
		ff.f, err = bloom.DecodeWindow(r, maxBits)
	case "blocked":
		ff.f, err = bloom.DecodeBlocked(r, maxBits)
	default:
		err = fmt.Errorf("%s filters are not supported", info.Kind)
	}
	if err == nil {
		if _, rerr := r.ReadByte(); rerr != io.EOF {
			err = errors.New("trailing bytes after the filter")
		}
	}
	if err != nil {
		ff.close()
		return nil, fileError(path, err)
	}
	return ff, nil
}

// isSharded reports whether the file at path starts as a sharded container
// does (snapshot.Magic): a service filter's snapshot of more than one shard,
// as pull writes it, or build --shards' output.
func isSharded(path string) (bool, error) {
	fd, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer fd.Close()
	magic := make([]byte, len(snapshot.Magic))
	n, err := io.ReadFull(fd, magic)
	if err != nil && n < len(magic) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, err
	}
	return string(magic[:n]) == snapshot.Magic, nil
}

// loadSharded opens the sharded container at path: read whole into memory
// (snapshot.LoadSharded checks its lengths and shard count before it
// decodes a record) and, by a writer, written back whole under the file's
// lock, as the kinds other than classic are.
func loadSharded(path string, mode access) (*filterFile, error) {
	ff := &filterFile{path: path}
	var fd *os.File
	var err error
	if mode == readWrite {
		if ff.lock, err = bloom.LockFile(path); err != nil {
			return nil, fileError(path, err)
		}
		fd = ff.lock.File()
	} else if fd, err = os.Open(path); err != nil {
		return nil, err
	} else {
		defer fd.Close()
	}
	data, err := io.ReadAll(io.NewSectionReader(fd, 0, math.MaxInt64))
	var s *snapshot.Sharded
	if err == nil {
		s, err = snapshot.LoadSharded(data, maxBits)
	}
	if err != nil {
		ff.close()
		return nil, fileError(path, err)
	}
	ff.f = s
	ff.info = bloom.Info{
		Kind: "sharded", Bits: s.NumBits(), Hashes: s.NumHashes(), Seed: s.Seed(),
		Count: s.Count(), Capacity: s.Capacity(), FPRate: s.TargetFPR(), Size: uint64(len(data)),
	}
	return ff, nil
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
// filter, else the whole filter written to a new file that replaces the
// locked one.
func (ff *filterFile) save() error {
	if ff.file != nil {
		return libError(cmp.Or(ff.file.Err(), ff.file.Sync()))
	}
	if err := ff.lock.Replace(ff.f.(io.WriterTo)); err != nil {
		return fmt.Errorf("writing %s: %w", ff.path, libError(err))
	}
	return nil
}

// close releases the file and its lock; it is the end of a read.
func (ff *filterFile) close() error {
	switch {
	case ff.file != nil:
		return libError(ff.file.Close())
	case ff.lock != nil:
		return ff.lock.Close()
	}
	return nil
}

// writeFileAtomic writes f's encoding to a temporary file beside path and
// renames it into place, so that a crash leaves either the old file or the
// new one, never half of one, unless another writer holds path: then path
// is left as it was and the error says so.
func writeFileAtomic(path string, f io.WriterTo) error {
	err := bloom.WriteFile(path, f)
	var pe *os.PathError
	switch {
	case errors.Is(err, bloom.ErrLocked):
		return fileError(path, err)
	case errors.As(err, &pe) && pe.Path == path:
		return err
	case err != nil:
		return fmt.Errorf("writing %s: %w", path, libError(err))
	}
	return nil
}
