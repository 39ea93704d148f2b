package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// A SyncMode is how a Copy catches up with the service (worker/README.md,
// "Snapshots and local copies").
type SyncMode int

const (
	// Changes syncs through GET /changes?since=CURSOR: every change at once,
	// each sync asking every shard. For a few readers.
	Changes SyncMode = iota
	// Checkpoints syncs through the filter's published checkpoints, which
	// the edge cache serves to every reader of a colo: a copy is at most a
	// checkpoint interval (and 5 s) behind. For any number of readers.
	Checkpoints
)

func (m SyncMode) String() string {
	switch m {
	case Changes:
		return "changes"
	case Checkpoints:
		return "checkpoints"
	}
	return "SyncMode(" + strconv.Itoa(int(m)) + ")"
}

// CopyOptions set up a Copy.
type CopyOptions struct {
	// Mode is how the copy syncs; the default is Changes.
	Mode SyncMode
	// Path, when set, is the file the copy is kept in: the filter's
	// snapshot, byte for byte what GET .../snapshot of the same state gives
	// (bloom.Decode, snapshot.Load, the CLI and the npm module's fromBytes
	// read it), and beside it Path+".cursor", a small JSON file saying which
	// filter, generation, cursor and checkpoint it holds. NewCopy loads
	// them, so a copy resumes where it stopped; each Sync that changes the
	// copy writes both, each atomically (bloom.WriteFile), the snapshot
	// first: a crash between the two leaves the cursor of an older state
	// beside the newer snapshot, which costs the next sync a few bits set
	// again. Not on js and wasip1, where package bloom writes no files:
	// NewCopy refuses a Path there.
	Path string
}

// A Copy is a local copy of a service filter, kept in sync by Sync or Run,
// which answers lookups without a request. It never holds bits of two
// generations of a filter: when the filter is deleted and made again, the
// next sync that sees the new generation replaces the whole copy with the
// new filter's snapshot (deltas are applied only to a copy of their
// generation, snapshot.ApplyDelta). Until then, and while the filter does
// not exist, the copy keeps what it holds. A Copy is safe for concurrent
// use: lookups go on during a sync.
type Copy struct {
	c    *Client
	name string
	opts CopyOptions

	syncing sync.Mutex // one sync at a time

	mu     sync.RWMutex
	set    snapshot.Set // nil before the first sync
	state  copyState
	synced time.Time
}

// copyState is what a copy holds, as Path+".cursor" keeps it.
type copyState struct {
	Filter     string `json:"filter"`
	Generation uint64 `json:"generation"`
	// Cursor is the service's X-Edgebloom-Cursor of what the copy holds;
	// empty when it holds nothing.
	Cursor string `json:"cursor"`
	// Checkpoint is the number of the checkpoint the copy holds, 0 when it
	// was synced otherwise.
	Checkpoint uint64 `json:"checkpoint"`
}

// NewCopy returns a copy of the filter name. With opts.Path it loads what
// the file holds (see CopyOptions.Path); an existing Path it did not write
// (no cursor file beside it, or one of another filter) is refused, so that
// a sync never overwrites a file that is not a copy of this filter. Nothing
// is requested: call Sync or Run.
func (c *Client) NewCopy(name string, opts CopyOptions) (*Copy, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if opts.Mode != Changes && opts.Mode != Checkpoints {
		return nil, fmt.Errorf("client: NewCopy: mode %v must be Changes or Checkpoints", opts.Mode)
	}
	cp := &Copy{c: c, name: name, opts: opts, state: copyState{Filter: name}}
	if opts.Path != "" {
		if err := cp.load(); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// HasString reports whether key is probably in the copy; false before the
// copy holds anything (Loaded).
func (cp *Copy) HasString(key string) bool {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.set != nil && cp.set.HasString(key)
}

// Has reports whether key is probably in the copy; false before the copy
// holds anything (Loaded).
func (cp *Copy) Has(key []byte) bool {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.set != nil && cp.set.Has(key)
}

// Loaded reports whether the copy holds a filter: from its file, or a sync.
func (cp *Copy) Loaded() bool {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.set != nil
}

// Generation returns the generation of the filter the copy holds, 0 when
// it holds none.
func (cp *Copy) Generation() uint64 {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.state.Generation
}

// Cursor returns the service's cursor of what the copy holds ("" when it
// holds nothing).
func (cp *Copy) Cursor() string {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.state.Cursor
}

// Synced returns when a Sync last succeeded (whether or not the copy
// changed), the zero time before one did: how far the copy may be behind
// the service, for a caller that refuses to answer from a copy too old.
func (cp *Copy) Synced() time.Time {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	return cp.synced
}

// View calls f with the copy's filter (a *bloom.Filter or a
// *snapshot.Sharded; nil when the copy holds nothing), which no sync changes
// while f runs. f must not keep it, nor change it.
func (cp *Copy) View(f func(snapshot.Set)) {
	cp.mu.RLock()
	defer cp.mu.RUnlock()
	f(cp.set)
}

// WriteTo writes the copy's bytes, the service's snapshot of the state it
// holds, to w. It fails when the copy holds nothing.
func (cp *Copy) WriteTo(w io.Writer) (int64, error) {
	cp.mu.RLock()
	set := cp.set
	var data []byte
	var err error
	if set != nil {
		data, err = marshalSet(set) // under the lock: a sync may change set in place
	}
	cp.mu.RUnlock()
	if set == nil {
		return 0, errors.New("client: the copy holds nothing yet: Sync first")
	}
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	return int64(n), err
}

// A SyncResult says what one sync did.
type SyncResult struct {
	// Changed is set when the copy changed: a delta with changes, or a
	// snapshot.
	Changed bool
	// Snapshot is set when the copy was replaced by the filter's snapshot.
	Snapshot bool
	// Resync says why a copy that held a filter was replaced by a snapshot:
	// "generation" (the filter was made again), "gone" (the shards no longer
	// hold the changes it needs), "checkpoint_gone" (its checkpoint is no
	// longer kept), "mismatch" (a delta did not fit it); "" otherwise.
	Resync string
	// Generation, Cursor and Checkpoint are what the copy holds after.
	Generation uint64
	Cursor     string
	Checkpoint uint64
	// Bytes counts the bytes of deltas and snapshots downloaded.
	Bytes int64
}

// Sync brings the copy up to date once, and writes it to its Path when it
// changed. On error the copy, its file and its cursor are as they were
// (except when the error is writing the file: the copy in memory is then
// the newer). Errors are the client's: ErrNotFound while there is no
// filter of the name, ErrCheckpointPending before a new filter's first
// checkpoint in Checkpoints mode, and so on.
func (cp *Copy) Sync(ctx context.Context) (SyncResult, error) {
	cp.syncing.Lock()
	defer cp.syncing.Unlock()
	cp.mu.RLock()
	st, set := cp.state, cp.set
	cp.mu.RUnlock()
	var (
		next SyncResult
		nset snapshot.Set
		err  error
	)
	if cp.opts.Mode == Checkpoints {
		nset, next, err = cp.syncCheckpoints(ctx, st, set)
	} else {
		nset, next, err = cp.syncChanges(ctx, st, set)
	}
	if err != nil {
		return next, err
	}
	cp.mu.Lock()
	cp.synced = time.Now()
	if !next.Changed {
		cp.mu.Unlock()
		return next, nil
	}
	if nset != nil {
		cp.set = nset
	}
	cp.state = copyState{Filter: cp.name, Generation: next.Generation, Cursor: next.Cursor, Checkpoint: next.Checkpoint}
	cp.mu.Unlock()
	if cp.opts.Path != "" {
		if err := cp.save(); err != nil {
			return next, err
		}
	}
	return next, nil
}

// Run syncs the copy now and then every interval until ctx ends, and
// returns ctx's error then. After each sync it calls report (when not nil)
// with the result and the error. An error ends Run only when waiting cannot
// cure it: a credential refused (ErrUnauthorized, ErrForbidden) or a file
// that cannot be written; every other error (no such filter yet, a shard
// unreachable after the retries, the network) is reported, and the next
// sync comes at the next interval.
func (cp *Copy) Run(ctx context.Context, interval time.Duration, report func(SyncResult, error)) error {
	if interval <= 0 {
		return fmt.Errorf("client: Run: interval %v must be positive", interval)
	}
	for {
		res, err := cp.Sync(ctx)
		if report != nil {
			report(res, err)
		}
		var fe *fileError
		if errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrForbidden) || errors.As(err, &fe) {
			return err
		}
		if !cp.c.sleep(ctx.Done(), interval) {
			return ctx.Err()
		}
	}
}

// syncChanges syncs through /changes.
func (cp *Copy) syncChanges(ctx context.Context, st copyState, set snapshot.Set) (snapshot.Set, SyncResult, error) {
	path := filterPath(cp.name, "/changes")
	var res SyncResult
	cur, ok := cp.cursorOf(st, set)
	if ok {
		d, err := cp.c.getBinary(ctx, path, "since="+url.QueryEscape(st.Cursor))
		var e *Error
		if errors.As(err, &e) && e.Code == "invalid_params" {
			// A cursor the service does not know: start again.
			ok, res.Resync = false, "mismatch"
		} else if err != nil {
			return nil, res, err
		}
		if ok {
			res.Bytes = int64(len(d.body))
			if d.header.Get("X-Edgebloom-Format") != "delta" {
				res.Resync = d.header.Get("X-Edgebloom-Resync")
				return cp.loaded(d, res, 0)
			}
			nset, r, err := cp.applyDelta(d, set, st, cur, 0, res)
			if !errors.Is(err, snapshot.ErrDeltaMismatch) {
				return nset, r, err
			}
			res.Resync = "mismatch"
		}
	}
	d, err := cp.c.getBinary(ctx, path, "")
	if err != nil {
		return nil, res, err
	}
	res.Bytes += int64(len(d.body))
	return cp.loaded(d, res, 0)
}

// cursorOf parses the cursor of a copy that holds a filter.
func (cp *Copy) cursorOf(st copyState, set snapshot.Set) (snapshot.Cursor, bool) {
	if set == nil || st.Cursor == "" {
		return snapshot.Cursor{}, false
	}
	cur, err := snapshot.ParseCursor(st.Cursor)
	if err != nil || cur.Generation != st.Generation || len(cur.Shards) != shardCount(set) {
		return snapshot.Cursor{}, false
	}
	return cur, true
}

// applyDelta applies a delta to a copy of set: a new filter is made only
// when the delta applies, and set is changed in place (under the write
// lock) otherwise — so a delta that does not fit leaves the copy whole.
func (cp *Copy) applyDelta(d *download, set snapshot.Set, st copyState, cur snapshot.Cursor, checkpoint uint64, res SyncResult) (snapshot.Set, SyncResult, error) {
	cp.mu.Lock()
	next, err := snapshot.ApplyDelta(set, cur, d.body)
	cp.mu.Unlock()
	if errors.Is(err, snapshot.ErrDeltaMismatch) {
		return nil, res, fmt.Errorf("client: %w", err)
	}
	if err != nil {
		return nil, res, fmt.Errorf("client: the service's delta: %w", err)
	}
	text := next.Text()
	res.Generation, res.Cursor, res.Checkpoint = next.Generation, text, checkpoint
	res.Changed = text != st.Cursor || checkpoint != st.Checkpoint
	return nil, res, nil
}

// loaded loads a snapshot answer, which carries its cursor.
func (cp *Copy) loaded(d *download, res SyncResult, checkpoint uint64) (snapshot.Set, SyncResult, error) {
	text := d.header.Get("X-Edgebloom-Cursor")
	cur, err := snapshot.ParseCursor(text)
	if err != nil {
		return nil, res, fmt.Errorf("%w: a snapshot without a cursor (%v)", errUnexpected, err)
	}
	set, err := loadSnapshot(d)
	if err != nil {
		return nil, res, err
	}
	if len(cur.Shards) != shardCount(set) {
		return nil, res, fmt.Errorf("%w: a cursor of %d shards for a snapshot of %d", errUnexpected, len(cur.Shards), shardCount(set))
	}
	res.Changed, res.Snapshot = true, true
	res.Generation, res.Cursor, res.Checkpoint = cur.Generation, text, checkpoint
	return set, res, nil
}

func shardCount(set snapshot.Set) int {
	if s, ok := set.(*snapshot.Sharded); ok {
		return len(s.Shards)
	}
	return 1
}

func marshalSet(set snapshot.Set) ([]byte, error) {
	switch s := set.(type) {
	case *bloom.Filter:
		return s.MarshalBinary()
	case *snapshot.Sharded:
		return s.MarshalBinary()
	}
	return nil, fmt.Errorf("client: a copy of %T", set)
}

// A fileError is a failure to read or write a copy's files.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }
