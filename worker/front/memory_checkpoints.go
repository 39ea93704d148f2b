//go:build !(js && wasm)

package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The host's stand-in for the checkpoint object (shard/checkpoint-object.js),
// with the same protocol: GET /checkpoints?generation=G&interval=MS and
// POST /checkpoints {"generation", "after", "cursor"}.
type memoryCheckpointState struct {
	generation uint64
	list       []checkpoint
	checked    time.Time
	lease      time.Time
}

var memoryCheckpoints = struct {
	sync.Mutex
	m map[*memoryObjects]map[string]*memoryCheckpointState
}{m: map[*memoryObjects]map[string]*memoryCheckpointState{}}

func (o *memoryObjects) serveCheckpoints(w http.ResponseWriter, name, method, path string, body []byte) {
	path, query, _ := strings.Cut(path, "?")
	if path != "/checkpoints" {
		writeError(w, "", errorf(404, "not_found", "no such checkpoint endpoint"))
		return
	}
	var in struct {
		Generation uint64 `json:"generation"`
		After      uint64 `json:"after"`
		Cursor     string `json:"cursor"`
	}
	q, _ := url.ParseQuery(query)
	if method == "POST" {
		json.Unmarshal(body, &in)
	} else {
		in.Generation, _ = strconv.ParseUint(q.Get("generation"), 10, 64)
	}
	memoryCheckpoints.Lock()
	defer memoryCheckpoints.Unlock()
	states := memoryCheckpoints.m[o]
	if states == nil {
		states = map[string]*memoryCheckpointState{}
		memoryCheckpoints.m[o] = states
	}
	st := states[name]
	if st != nil && st.generation > in.Generation {
		writeError(w, "", errorf(409, staleGeneration, "the checkpoints are of a newer generation"))
		return
	}
	if st == nil || st.generation < in.Generation {
		st = &memoryCheckpointState{generation: in.Generation}
		states[name] = st
	}
	now := time.Now()
	due := false
	if method == "GET" {
		ms, _ := strconv.ParseInt(q.Get("interval"), 10, 64)
		if due = now.Sub(st.checked) >= time.Duration(ms)*time.Millisecond && !now.Before(st.lease); due {
			st.lease = now.Add(10 * time.Second)
		}
	} else if n := len(st.list); n == 0 && in.After == 0 || n > 0 && st.list[n-1].N == in.After {
		if n == 0 || st.list[n-1].Cursor != in.Cursor {
			st.list = append(st.list, checkpoint{N: in.After + 1, Cursor: in.Cursor, Time: now.UnixMilli()})
			if len(st.list) > keptCheckpoints {
				st.list = st.list[len(st.list)-keptCheckpoints:]
			}
		}
		st.checked, st.lease = now, time.Time{}
	}
	list := st.list
	if list == nil {
		list = []checkpoint{}
	}
	writeJSON(w, 200, checkpointList{Generation: st.generation, Checkpoints: list, Due: due})
}
