package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var itoa = strconv.Itoa

func truncate(t *testing.T, dir, name string, n int) {
	t.Helper()
	if err := os.Truncate(filepath.Join(dir, name), int64(n)); err != nil {
		t.Fatal(err)
	}
}

// fileKinds are the kinds of filter file build makes, with its flags for
// each.
var fileKinds = []struct {
	name  string
	build []string
}{
	{"classic", nil},
	{"window", []string{"--window", "3"}},
	{"blocked", []string{"--kind", "blocked"}},
}

// A writer is an edgebloom command that holds a filter file open for
// writing while it reads keys from stdin.
type writer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
}

// startWriter starts the command and feeds it keys until it has surely
// opened its file: it opens the file before it reads stdin, so once it has
// read more than a pipe holds (64 KiB on Linux) it holds the file.
func startWriter(t *testing.T, dir, keys string, args ...string) *writer {
	t.Helper()
	w := &writer{cmd: exec.Command(binary, args...)}
	w.cmd.Dir = dir
	var err error
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	w.cmd.Stderr = &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	if len(keys) <= 128<<10 {
		t.Fatalf("startWriter: %d bytes of keys, want more than two pipe buffers", len(keys))
	}
	if _, err := io.WriteString(w.stdin, keys); err != nil {
		t.Fatal(err)
	}
	return w
}

// finish ends the writer's input and waits for it to succeed.
func (w *writer) finish(t *testing.T) {
	t.Helper()
	w.stdin.Close()
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(w.cmd.Args, " "), err, w.stderr.String())
	}
}

// TestTwoWriters runs a second writing command of every sort while an add
// holds a filter file of each kind: each is refused with one line naming
// the file, and when the first add ends, every key it added is present.
func TestTwoWriters(t *testing.T) {
	for _, kind := range fileKinds {
		t.Run(kind.name, func(t *testing.T) {
			dir := t.TempDir()
			expect(t, dir, urls(0, 10), 0, append([]string{"build", "-n", "20000", "-o", "f.bloom"}, kind.build...)...)
			expect(t, dir, urls(100, 10), 0, append([]string{"build", "-n", "20000", "-o", "g.bloom"}, kind.build...)...)
			first := startWriter(t, dir, urls(1000, 5000), "add", "f.bloom")
			locked := func(cmd string) string {
				return "edgebloom: " + cmd + ": f.bloom: the file is open for writing elsewhere\n"
			}
			for _, tt := range []struct {
				args []string
				want string
			}{
				{[]string{"add", "f.bloom", "https://example.com/second"}, locked("add")},
				{append([]string{"build", "-n", "20000", "-o", "f.bloom"}, kind.build...), locked("build")},
				{[]string{"merge", "-o", "f.bloom", "g.bloom", "g.bloom"}, locked("merge")},
				{[]string{"rotate", "f.bloom"}, locked("rotate")},
			} {
				if kind.name == "window" && tt.args[0] == "merge" {
					continue // merge takes no window filters
				}
				if kind.name != "window" && tt.args[0] == "rotate" {
					continue // only window filters rotate
				}
				r := edgebloom(t, dir, urls(0, 10), tt.args...)
				if r.status != 2 || r.stderr != tt.want {
					t.Errorf("%s while add holds the file: status %d, stderr %q; want 2, %q", tt.args[0], r.status, r.stderr, tt.want)
				}
			}
			// Readers need no lock.
			expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/page/1?x=1")

			first.finish(t)
			r := expect(t, dir, urls(0, 10)+urls(1000, 5000), 0, "check", "f.bloom")
			if n := strings.Count(r.stdout, "\tpresent\n"); n != 5010 {
				t.Errorf("after the first add: %d of its 5010 keys present", n)
			}
			// The file is free again: a second add now keeps every key of both.
			expect(t, dir, "", 0, "add", "f.bloom", "https://example.com/second")
			expect(t, dir, urls(0, 10)+urls(1000, 5000)+"https://example.com/second\n", 0, "check", "-q", "f.bloom")
		})
	}
}

// TestTruncatedFile checks that check, info, add and rotate report a filter
// file shorter or longer than its header says, with both lengths, in one
// line, of every kind, and that an add whose mapped file is truncated under
// it stops with an error instead of a SIGBUS crash.
func TestTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range fileKinds {
		expect(t, dir, urls(0, 10), 0, append([]string{"build", "-n", "1000", "-o", kind.name + ".bloom"}, kind.build...)...)
		r := expect(t, dir, "", 0, "info", "--json", kind.name+".bloom")
		var fi fileInfo
		if err := json.Unmarshal([]byte(r.stdout), &fi); err != nil {
			t.Fatal(err)
		}
		size := fi.Size
		for _, n := range []int{int(size) / 2, int(size) + 3} {
			path := kind.name + ".bloom"
			truncate(t, dir, path, n)
			want := "truncated: the file is " + itoa(n) + " bytes, its header says " + itoa(int(size))
			if n > int(size) {
				want = "the file is " + itoa(n) + " bytes, its header says " + itoa(int(size)) + ": trailing bytes after the filter"
			}
			for _, args := range [][]string{{"check", path, "k"}, {"info", path}, {"add", path, "k"}} {
				r := expect(t, dir, "", 2, args...)
				if r.stderr != "edgebloom: "+args[0]+": "+path+": "+want+"\n" {
					t.Errorf("%s of a %d-byte %s file: stderr %q; want %q", args[0], n, kind.name, r.stderr, want)
				}
			}
		}
	}

	// Truncated under a running add, which has the file mapped.
	expect(t, dir, urls(0, 10), 0, "build", "-n", "1M", "-o", "big.bloom")
	w := startWriter(t, dir, urls(0, 5000), "add", "big.bloom")
	truncate(t, dir, "big.bloom", 4096)
	io.WriteString(w.stdin, urls(5000, 20000))
	w.stdin.Close()
	w.cmd.Wait()
	want := "edgebloom: add: a page of the memory-mapped filter file could not be read or written (the file truncated by another program, or its disk full); check the file with edgebloom info\n"
	if w.cmd.ProcessState.ExitCode() != 2 || w.stderr.String() != want {
		t.Errorf("add of a file truncated under it: status %d, stderr %q; want 2, %q", w.cmd.ProcessState.ExitCode(), w.stderr.String(), want)
	}
}
