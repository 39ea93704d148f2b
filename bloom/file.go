//go:build !js && !wasip1

// The file-backed filter uses package os, which is kept out of the js and
// wasip1 builds: it would add to the npm module's wasm more than its size
// budget has room for (docs/size.md, "What each choice saves").

package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// Errors of file-backed filters.
var (
	// ErrLocked means another FileFilter, in this process or another, has
	// the file open for writing.
	ErrLocked = errors.New("bloom: the file is open for writing elsewhere")
	// ErrReadOnly means a change was asked of a filter opened with
	// OpenReadOnly.
	ErrReadOnly = errors.New("bloom: the filter was opened read-only")
)

var errClosed = fmt.Errorf("bloom: the file filter is closed: %w", os.ErrClosed)

// A FileFilter is a classic Bloom filter kept in a file, which is at every
// moment the filter's encoding (docs/format.md): Decode, the npm module's
// fromBytes and the edgebloom CLI read it like any other. On Linux, macOS
// and the BSDs the file is memory-mapped, so a filter larger than memory
// pages in as needed and opening costs one pass to check the checksum;
// elsewhere, and on big-endian machines, the payload is read into memory and
// Sync writes it back.
//
// # Crash safety
//
// Sync makes everything added so far durable. A process killed at any
// moment, even inside Sync, leaves a file that Open reads, holding every key
// added before the last Sync that returned nil. The first Add after a Sync
// marks the file dirty (flag bit 0 of the header) and flushes that mark
// before changing any bit; Sync flushes the bits, then count and checksum,
// then clears the mark. Open repairs a dirty file: bits are only ever set,
// so none set before the last Sync was lost; the count, which the file does
// not hold for keys added since, becomes the estimate -m/k·ln(1 - X/m), and
// the checksum is written anew. A clean file with a wrong checksum is
// corrupt, and Open refuses it with ErrChecksum.
//
// # Locking
//
// A filter opened by Create or Open holds an exclusive lock on the file
// (flock on unix, a share mode that denies other writers on Windows) until
// Close or the end of the process; a second writer, in the same process or
// another, gets an error wrapping ErrLocked. WriteFile, FileLock and Create
// take the same lock, and never rename a file over one that a writer holds.
// Readers (OpenReadOnly) take no lock and see, where the file is mapped, a
// writer's new keys as they come. Other systems (Plan 9, Solaris, AIX, …) have no lock.
//
// # Files changed underneath
//
// Like every store that maps its file (LMDB, SQLite's memory-mapped I/O,
// bbolt), a FileFilter relies on its file keeping its length: a file
// truncated, or rewritten shorter in place, by another program while a
// FileFilter has it mapped makes the next access to a page past the new end
// fault, and Go ends the process with SIGBUS unless the goroutine asked for
// a panic instead (runtime/debug.SetPanicOnFault). Open, OpenReadOnly and
// Create never leave a mapping past the end: they check the file's length
// against its header before mapping (a short file gives an error wrapping
// io.ErrUnexpectedEOF, a long one ErrCorrupt), and Create reserves the
// file's blocks, so a full disk is its error, not a fault of a later Add.
// (Copy-on-write file systems such as btrfs and ZFS reserve no room for
// rewrites: there a full disk can still fault a later write.) Programs that
// replace a filter file use WriteFile, which renames a new file into place
// and leaves readers of the old one undisturbed.
//
// # Concurrency
//
// A FileFilter is safe for concurrent use: Add and Has run in parallel
// (bits are set by atomic OR, as in SyncFilter), Union, Sync and Close wait
// for them. Calls after Close panic.
type FileFilter struct {
	mu       sync.RWMutex // Add, Has and stats hold it shared; Sync and Close exclusively
	f        *Filter      // nil after Close
	file     *os.File
	data     []byte // the mapped file, or nil when the payload is in f's memory
	readOnly bool

	dirty   atomic.Bool // the file is marked dirty
	dirtyMu sync.Mutex  // orders marking

	errMu sync.Mutex
	err   error // the first error of Add or Union
}

// mapFiles says whether to map files where the system can: only when the
// machine stores words as the format does, little-endian, so that the
// mapped payload can be used as []uint64. Tests turn it off to run the
// read/write path.
var mapFiles = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// Create makes a file-backed filter at path sized by Optimal for capacity
// keys at false-positive rate fpRate, and opens it for writing. The file,
// 72 bytes plus m/8, is made under a temporary name beside path with its
// blocks reserved (fallocate on Linux, zeros written elsewhere), so that a
// full disk or quota is an error of Create, never a fault when a page of
// the mapping is first written. It is then renamed to path, unless another
// writer has path open (ErrLocked): then path is left as it was. Readers
// that have an old file at path open keep reading the old file.
func Create(path string, capacity uint64, fpRate float64) (*FileFilter, error) {
	m, k, err := Optimal(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	h := header{kind: kindClassic, flags: flagDirty, m: m, k: k, capacity: capacity, fpRate: fpRate, payload: 8 * wordsFor(m)}
	if recordSize(h.payload) > math.MaxInt {
		return nil, argError("capacity", "too large for this platform's address space")
	}
	// Written dirty and without a checksum: open repairs it, so a Create cut
	// short leaves a file that Open reads as an empty filter.
	file, err := writeTemp("create", path, func(file *os.File) error {
		if err := reserve(file, int64(recordSize(h.payload))); err != nil {
			return err
		}
		_, err := file.WriteAt(h.encode(), 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return openFile(file, true)
}

// Open opens the file-backed filter at path for reading and writing,
// repairing it if a writer stopped without Sync (see FileFilter). It
// returns an error wrapping ErrLocked when another writer has it open, and
// the errors of Decode for a file that is not a sound classic filter.
func Open(path string) (*FileFilter, error) {
	file, err := openWriter(path, 0)
	if err != nil {
		return nil, err
	}
	return openFile(file, true)
}

// OpenReadOnly opens the file-backed filter at path for reading, without a
// lock. Add on it changes nothing, returns false and sets Err to
// ErrReadOnly; Sync returns ErrReadOnly. A dirty file is repaired in memory
// only (its count is estimated).
func OpenReadOnly(path string) (*FileFilter, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return openFile(file, false)
}

// openFile reads, checks and maps the filter in file, repairs it when it is
// dirty, and takes ownership of file.
func openFile(file *os.File, writable bool) (ff *FileFilter, err error) {
	defer func() {
		if err != nil {
			file.Close()
			ff = nil
		}
	}()
	var hb [headerSize]byte
	if _, err := file.ReadAt(hb[:], 0); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	h, err := decodeHeader(hb[:], kindClassic, MaxBits)
	if err != nil {
		return nil, err
	}
	size := recordSize(h.payload)
	st, err := file.Stat()
	switch {
	case err != nil:
		return nil, err
	case uint64(st.Size()) < size:
		// Checked before the file is mapped: a page past its end would
		// fault when touched.
		return nil, fmt.Errorf("bloom: the file is %d bytes, its header says %d: %w", st.Size(), size, io.ErrUnexpectedEOF)
	case uint64(st.Size()) > size:
		return nil, wrap(ErrCorrupt, fmt.Sprintf("trailing bytes after the filter: the file is %d bytes, its header says %d", st.Size(), size))
	case size > math.MaxInt:
		return nil, wrap(ErrTooLarge, "the file does not fit this platform's address space")
	}

	ff = &FileFilter{file: file, readOnly: !writable}
	f := &Filter{count: h.count, m: h.m, k: h.k, seed: h.seed, capacity: h.capacity, fpRate: h.fpRate}
	var sum, want uint64
	if mapFiles {
		// Where mapping fails (some file systems refuse it), the file is
		// read instead.
		ff.data, _ = mapFile(file, int(size), writable)
	}
	if data := ff.data; data != nil {
		defer func() {
			if err != nil {
				unmapFile(data)
			}
		}()
		f.words = unsafe.Slice((*uint64)(unsafe.Pointer(&ff.data[headerSize])), h.payload/8)
		sum = xxhash.Sum64(ff.data[:size-checksumSize])
		want = binary.LittleEndian.Uint64(ff.data[size-checksumSize:])
	} else {
		rr := &recordReader{r: io.NewSectionReader(file, 0, int64(size)), d: xxhash.New()}
		if err := rr.readFull(hb[:]); err != nil {
			return nil, err
		}
		if f.words, err = rr.readWords(h.payload / 8); err != nil {
			return nil, err
		}
		sum = rr.d.Sum64()
		var b [checksumSize]byte
		if err := rr.readFull(b[:]); err != nil {
			return nil, err
		}
		want = binary.LittleEndian.Uint64(b[:])
	}
	if err := checkPadding(kindClassic, h.m, f.words); err != nil {
		return nil, err
	}
	ff.f = f
	dirty := h.flags&flagDirty != 0
	if !dirty && sum != want {
		// A reader may have caught a writer at work: the mark comes first.
		if _, err := file.ReadAt(hb[:], 0); err != nil || hb[7]&flagDirty == 0 {
			return nil, ErrChecksum
		}
		dirty = true
	}
	if dirty {
		f.recount()
		if writable {
			ff.dirty.Store(true)
			if err := ff.syncLocked(); err != nil {
				return nil, err
			}
		}
	}
	return ff, nil
}

// writeAt writes b at offset off of the file, through the mapping if there
// is one.
func (ff *FileFilter) writeAt(b []byte, off int64) error {
	if ff.data != nil {
		copy(ff.data[off:], b)
		return nil
	}
	_, err := ff.file.WriteAt(b, off)
	return err
}

// setFlags writes the flags byte and flushes it to disk. On Linux, fsync
// also writes back the mapping's changed pages.
func (ff *FileFilter) setFlags(flags byte) error {
	if err := ff.writeAt([]byte{flags}, 7); err != nil {
		return err
	}
	return ff.file.Sync()
}

// markDirty marks the file dirty, durably, before the first change after a
// Sync. The caller holds mu, shared or exclusively.
func (ff *FileFilter) markDirty() {
	ff.dirtyMu.Lock()
	defer ff.dirtyMu.Unlock()
	if ff.dirty.Load() {
		return
	}
	if err := ff.setFlags(flagDirty); err != nil {
		ff.setErr(err)
	}
	ff.dirty.Store(true)
}

func (ff *FileFilter) setErr(err error) {
	ff.errMu.Lock()
	defer ff.errMu.Unlock()
	if ff.err == nil {
		ff.err = err
	}
}

// Err returns the first error that Add, AddString or Union met and could
// not return: ErrReadOnly, or a failure to mark the file dirty on disk
// (the key was added in memory all the same, but a crash before the next
// Sync may leave a file that fails its checksum).
func (ff *FileFilter) Err() error {
	ff.errMu.Lock()
	defer ff.errMu.Unlock()
	return ff.err
}

// live takes mu shared and returns the filter; it panics after Close.
func (ff *FileFilter) live() *Filter {
	ff.mu.RLock()
	if ff.f == nil {
		ff.mu.RUnlock()
		panic("bloom: FileFilter used after Close")
	}
	return ff.f
}

// writable is live for a change: it reports false, and sets Err, on a
// read-only filter, and marks the file dirty otherwise.
func (ff *FileFilter) writable() (*Filter, bool) {
	f := ff.live()
	if ff.readOnly {
		ff.mu.RUnlock()
		ff.setErr(ErrReadOnly)
		return nil, false
	}
	if !ff.dirty.Load() {
		ff.markDirty()
	}
	return f, true
}

// Add adds key and reports whether it was new, as Filter.Add does. On a
// filter opened read-only it changes nothing and returns false; Err then
// returns ErrReadOnly.
func (ff *FileFilter) Add(key []byte) bool {
	f, ok := ff.writable()
	if !ok {
		return false
	}
	defer ff.mu.RUnlock()
	return f.addAtomic(sum(key, f.seed))
}

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (ff *FileFilter) AddString(key string) bool {
	f, ok := ff.writable()
	if !ok {
		return false
	}
	defer ff.mu.RUnlock()
	return f.addAtomic(sumString(key, f.seed))
}

// Union adds every key of o, as Filter.Union does. Adds wait meanwhile. It
// returns ErrReadOnly on a filter opened read-only.
func (ff *FileFilter) Union(o *Filter) error {
	if ff.readOnly {
		ff.setErr(ErrReadOnly)
		return ErrReadOnly
	}
	// The exclusive lock, because Filter.Union uses plain ORs.
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if ff.f == nil {
		panic("bloom: FileFilter used after Close")
	}
	if !ff.dirty.Load() {
		ff.markDirty()
	}
	return ff.f.Union(o)
}

// Has reports whether key is probably in the filter, as Filter.Has does.
func (ff *FileFilter) Has(key []byte) bool {
	f := ff.live()
	defer ff.mu.RUnlock()
	return f.hasAtomic(sum(key, f.seed))
}

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (ff *FileFilter) HasString(key string) bool {
	f := ff.live()
	defer ff.mu.RUnlock()
	return f.hasAtomic(sumString(key, f.seed))
}

// Sync makes every key added so far durable: it flushes the payload, then
// writes count and checksum, then marks the file clean, flushing after each
// step. It does nothing when nothing changed since the last Sync, and
// returns ErrReadOnly on a filter opened read-only.
func (ff *FileFilter) Sync() error {
	if ff.readOnly {
		return ErrReadOnly
	}
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if ff.f == nil {
		return errClosed
	}
	return ff.syncLocked()
}

func (ff *FileFilter) syncLocked() error {
	if !ff.dirty.Load() {
		return nil
	}
	f := ff.f
	h := f.header()
	// The checksum is that of the record as it will be once clean. Without
	// a mapping, the payload goes to the file on the way.
	var w io.Writer = io.Discard
	if ff.data == nil {
		w = io.NewOffsetWriter(ff.file, headerSize)
	}
	rw := newRecordWriter(w)
	rw.d.Write(h.encode())
	rw.writeWords(f.words)
	if rw.err != nil {
		return rw.err
	}
	if err := ff.file.Sync(); err != nil {
		return err
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h.count)
	if err := ff.writeAt(b[:], 32); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(b[:], rw.d.Sum64())
	if err := ff.writeAt(b[:], int64(headerSize+h.payload)); err != nil {
		return err
	}
	if err := ff.file.Sync(); err != nil {
		return err
	}
	if err := ff.setFlags(0); err != nil {
		return err
	}
	ff.dirty.Store(false)
	return nil
}

// Close syncs a filter opened for writing, then unmaps and closes the file,
// which releases the lock. It returns the first error of these steps; the
// filter is closed in any case, and Close again returns an error wrapping
// os.ErrClosed.
func (ff *FileFilter) Close() error {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if ff.f == nil {
		return errClosed
	}
	var err error
	if !ff.readOnly {
		err = ff.syncLocked()
	}
	if ff.data != nil {
		err = errors.Join(err, unmapFile(ff.data))
	}
	err = errors.Join(err, ff.file.Close())
	ff.f, ff.data = nil, nil
	return err
}

// stat runs one of Filter's statistics under the lock.
func stat[T any](ff *FileFilter, s func(*Filter) T) T {
	defer ff.mu.RUnlock()
	return s(ff.live())
}

// NumBits returns m, the number of bits.
func (ff *FileFilter) NumBits() uint64 { return stat(ff, (*Filter).NumBits) }

// NumHashes returns k, the number of hash functions.
func (ff *FileFilter) NumHashes() uint32 { return stat(ff, (*Filter).NumHashes) }

// Seed returns the hash seed.
func (ff *FileFilter) Seed() uint64 { return stat(ff, (*Filter).Seed) }

// Count returns the number of Add calls that returned true, as recorded in
// the file at Open and counted since; after the repair of a dirty file it
// starts from the estimate.
func (ff *FileFilter) Count() uint64 { return stat(ff, (*Filter).Count) }

// Capacity returns the capacity the filter was made for.
func (ff *FileFilter) Capacity() uint64 { return stat(ff, (*Filter).Capacity) }

// TargetFPR returns the false-positive rate the filter was made for.
func (ff *FileFilter) TargetFPR() float64 { return stat(ff, (*Filter).TargetFPR) }

// SetBits returns the number of bits set.
func (ff *FileFilter) SetBits() uint64 { return stat(ff, (*Filter).SetBits) }

// FillRatio returns the fraction of bits set.
func (ff *FileFilter) FillRatio() float64 { return stat(ff, (*Filter).FillRatio) }

// EstimatedCount estimates the number of distinct keys from the bits set.
func (ff *FileFilter) EstimatedCount() float64 { return stat(ff, (*Filter).EstimatedCount) }

// EstimatedFPR returns the false-positive rate at the current fill.
func (ff *FileFilter) EstimatedFPR() float64 { return stat(ff, (*Filter).EstimatedFPR) }

// OverCapacity reports whether the filter holds more keys than it was made
// for.
func (ff *FileFilter) OverCapacity() bool { return stat(ff, (*Filter).OverCapacity) }

// EncodedSize returns the length of the file, which is the length of the
// filter's encoding.
func (ff *FileFilter) EncodedSize() uint64 { return stat(ff, (*Filter).EncodedSize) }

// WriteTo writes the filter's encoding to w, as Filter.WriteTo does: the
// bytes the file holds after a Sync. Adds wait meanwhile.
func (ff *FileFilter) WriteTo(w io.Writer) (int64, error) {
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if ff.f == nil {
		return 0, errClosed
	}
	return ff.f.WriteTo(w)
}

// MarshalBinary returns the filter's encoding.
func (ff *FileFilter) MarshalBinary() ([]byte, error) { return marshal(ff.EncodedSize(), ff.WriteTo) }

// Clone returns an in-memory copy of the filter.
func (ff *FileFilter) Clone() *Filter { return stat(ff, (*Filter).clone) }
