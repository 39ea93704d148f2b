package main

// The state file of a push to the service: what it publishes, and how far
// it got. It is written after every acknowledged request, atomically
// (a new file renamed over the old), so a push killed at any point resumes
// from its last acknowledged request: nothing acknowledged is sent again
// but the one request in flight, whose keys are then reported not new.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// pushState is the state file's JSON.
type pushState struct {
	// What is published: the service's base URL, the filter, the mode
	// ("keys" or "filter") and the inputs, each with its size (-1: not a
	// regular file, such as stdin), so that a state file is never applied
	// to another push.
	Service string       `json:"service"`
	Filter  string       `json:"filter"`
	Mode    string       `json:"mode"`
	Inputs  []pushSource `json:"inputs"`
	// Done is how far it got: keys (the first Done non-empty lines of the
	// inputs) or pieces of the filter, each acknowledged.
	Done uint64 `json:"done"`
	// New counts the keys the service reported new, or the bits a merge
	// set.
	New uint64 `json:"new"`
	// Generation is the filter's, once known: a filter deleted and made
	// again meanwhile is not resumed into.
	Generation uint64 `json:"generation,omitempty"`
}

type pushSource struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// pushSources describes the inputs as a state file names them.
func pushSources(inputs []string) []pushSource {
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	out := make([]pushSource, len(inputs))
	for i, in := range inputs {
		out[i] = pushSource{Path: in, Size: -1}
		if in == "-" {
			continue
		}
		if abs, err := filepath.Abs(in); err == nil {
			out[i].Path = abs
		}
		if fi, err := os.Stat(in); err == nil && fi.Mode().IsRegular() {
			out[i].Size = fi.Size()
		}
	}
	return out
}

// sameWork reports whether s describes the same push as o.
func (s *pushState) sameWork(o *pushState) bool {
	return s.Service == o.Service && s.Filter == o.Filter && s.Mode == o.Mode && slices.Equal(s.Inputs, o.Inputs)
}

// resumeState returns the state to start from: want, or the state file's
// when it describes the same push (and restart is not set). A state file
// of another push is an error naming it.
func resumeState(path string, want *pushState, restart bool) (*pushState, error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist) || restart && err == nil:
		return want, nil
	case err != nil:
		return nil, err
	}
	var have pushState
	if err := json.Unmarshal(b, &have); err != nil {
		return nil, fmt.Errorf("state file %s: not a push's state (%v); remove it, or push with --restart", path, err)
	}
	if !have.sameWork(want) {
		return nil, fmt.Errorf("state file %s is of another push (%s of %s to %s at %s); push with --restart to start over, or give another --state",
			path, have.Mode, describeInputs(have.Inputs), have.Filter, have.Service)
	}
	return &have, nil
}

func describeInputs(in []pushSource) string {
	if len(in) == 1 {
		return in[0].Path
	}
	return fmt.Sprintf("%d inputs", len(in))
}

// save writes the state file atomically.
func (s *pushState) save(path string) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
