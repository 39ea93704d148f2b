//go:build !(js && wasm)

package main

import (
	"encoding/json"
	"testing"
)

// TestCheckpointsCannotBeTurnedOff: EDGEBLOOM_CHECKPOINT_SECONDS sets only
// how often checkpoints are published. No value turns them off: 0, a
// negative number, one over a day or no number at all is the default, and
// a filter's latest checkpoint is served with that interval.
func TestCheckpointsCannotBeTurnedOff(t *testing.T) {
	for _, v := range []string{"", "0", "-1", "86401", "off", "false", "1.5"} {
		t.Setenv("EDGEBLOOM_CHECKPOINT_SECONDS", v)
		if got := checkpointSeconds(); got != defaultCheckpointSeconds {
			t.Errorf("EDGEBLOOM_CHECKPOINT_SECONDS=%q: every %d s, want the default %d", v, got, defaultCheckpointSeconds)
		}
	}
	for v, want := range map[string]int{"1": 1, "86400": 86400, " 30 ": 30} {
		t.Setenv("EDGEBLOOM_CHECKPOINT_SECONDS", v)
		if got := checkpointSeconds(); got != want {
			t.Errorf("EDGEBLOOM_CHECKPOINT_SECONDS=%q: every %d s, want %d", v, got, want)
		}
	}

	t.Setenv("EDGEBLOOM_CHECKPOINT_SECONDS", "0")
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/on", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	if status, body, _ := c.do("POST", "/v1/filters/on/add", keysBody([]string{"https://a.example/"})); status != 200 {
		t.Fatalf("add: %d %s", status, body)
	}
	status, body, _ := c.do("GET", "/v1/filters/on/checkpoints/latest", "")
	var latest struct {
		Checkpoint uint64 `json:"checkpoint"`
		Interval   int    `json:"interval"`
	}
	if status != 200 || json.Unmarshal(body, &latest) != nil {
		t.Fatalf("EDGEBLOOM_CHECKPOINT_SECONDS=0: latest checkpoint: %d %s", status, body)
	}
	if latest.Interval != defaultCheckpointSeconds || latest.Checkpoint == 0 {
		t.Errorf("EDGEBLOOM_CHECKPOINT_SECONDS=0: latest %s, want a checkpoint published every %d s", body, defaultCheckpointSeconds)
	}
}
