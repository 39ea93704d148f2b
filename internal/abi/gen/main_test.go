package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGenerated fails when js/abi.js is not what internal/abi/abi.go
// generates: the JavaScript side of the boundary would no longer match the
// engine's.
func TestGenerated(t *testing.T) {
	want, err := generate("../abi.go")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../js/abi.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("js/abi.js is stale: run go generate ./internal/abi and commit the result")
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"OpOutputPtr":      "OP_OUTPUT_PTR",
		"StatEstimatedFPR": "STAT_ESTIMATED_FPR",
		"NumStats":         "NUM_STATS",
		"ErrTooLarge":      "ERR_TOO_LARGE",
		"Version":          "VERSION",
	} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q): got %q; want %q", in, got, want)
		}
	}
}
