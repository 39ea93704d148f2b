//go:build !js && !wasip1

package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// cursorPath is where the state of the copy at path is kept.
func cursorPath(path string) string { return path + ".cursor" }

// maxStateBytes bounds the cursor file: a cursor of 64 shards is about 1.3 KB.
const maxStateBytes = 64 << 10

// load reads the copy's files. A file is the copy's when the cursor file
// beside it names this filter; a cursor file with an empty cursor claims the
// path before the first snapshot is written, so that a crash between the two
// leaves a path that is known to be the copy's.
func (cp *Copy) load() error {
	path := cp.opts.Path
	state, err := os.ReadFile(cursorPath(path))
	_, statErr := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && errors.Is(statErr, fs.ErrNotExist):
		return nil // a new copy
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("client: NewCopy: %s exists without %s beside it: it is no copy a Copy wrote; remove it or choose another Path",
			path, cursorPath(path))
	case err != nil:
		return &fileError{fmt.Errorf("client: NewCopy: %w", err)}
	case len(state) > maxStateBytes:
		return fmt.Errorf("client: NewCopy: %s is no cursor file (%d bytes)", cursorPath(path), len(state))
	}
	var st copyState
	if err := json.Unmarshal(state, &st); err != nil {
		return fmt.Errorf("client: NewCopy: %s is no cursor file: %v", cursorPath(path), err)
	}
	if st.Filter != cp.name {
		return fmt.Errorf("client: NewCopy: %s holds a copy of the filter %q, not %q", path, st.Filter, cp.name)
	}
	if st.Cursor == "" || statErr != nil {
		return nil // claimed, nothing written yet: the first sync loads the filter
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return &fileError{fmt.Errorf("client: NewCopy: %w", err)}
	}
	set, err := snapshot.Load(data, MaxShardBits)
	if err != nil {
		// The copy's own file, damaged: the first sync loads the filter
		// again and writes it anew.
		return nil
	}
	cp.set = set
	cp.state = st
	if _, ok := cp.cursorOf(st, set); !ok {
		// A cursor of another shape than the snapshot (a crash between the
		// two writes of a resync): the filter is kept for lookups, and the
		// next sync loads the snapshot again.
		cp.state.Cursor = ""
	}
	return nil
}

// save writes the copy's snapshot, then its cursor, each atomically; before
// the first snapshot it claims the path with an empty cursor (load).
func (cp *Copy) save() error {
	path := cp.opts.Path
	cp.mu.RLock()
	data, err := marshalSet(cp.set)
	st := cp.state
	cp.mu.RUnlock()
	if err != nil {
		return err
	}
	if _, err := os.Stat(cursorPath(path)); errors.Is(err, fs.ErrNotExist) {
		if err := writeState(path, copyState{Filter: cp.name}); err != nil {
			return err
		}
	}
	if err := bloom.WriteFile(path, bytes.NewReader(data)); err != nil {
		return &fileError{fmt.Errorf("client: writing the copy: %w", err)}
	}
	return writeState(path, st)
}

func writeState(path string, st copyState) error {
	b, _ := json.Marshal(st)
	if err := bloom.WriteFile(cursorPath(path), bytes.NewReader(append(b, '\n'))); err != nil {
		return &fileError{fmt.Errorf("client: writing the copy's cursor: %w", err)}
	}
	return nil
}
