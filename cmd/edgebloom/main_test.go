package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// The tests run the built binary as a user would, through its exit status,
// stdout and stderr.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edgebloom-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "edgebloom")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building edgebloom:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	status         int
	stdout, stderr string
}

// expect runs the binary with args in dir, stdin as its standard input,
// and fails the test unless it exits with status want.
func expect(t *testing.T, dir, stdin string, want int, args ...string) result {
	t.Helper()
	r := edgebloom(t, dir, stdin, args...)
	if r.status != want {
		t.Fatalf("edgebloom %s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), r.status, want, r.stdout, r.stderr)
	}
	return r
}

// edgebloom runs the binary with args in dir, stdin as its standard input.
func edgebloom(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("edgebloom %q: %v", args, err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

// summaryValue returns the value on the summary line called name.
func summaryValue(t *testing.T, out, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", name, out)
	}
	return m[1]
}

// urls returns n distinct URLs, newline-terminated.
func urls(first, n int) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "https://example.com/page/%d?x=%d\n", i, i%7)
	}
	return b.String()
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipped(t *testing.T, data string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(data))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestBuildAndCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), urls(0, 1000))
	writeFile(t, filepath.Join(dir, "b.txt.gz"), gzipped(t, urls(1000, 1000)+urls(0, 10)))
	// Three inputs: a file, a gzip file, and stdin with CRLF line ends,
	// blank lines and one key repeated from a.txt.
	stdin := "\r\nhttps://example.com/stdin/1\r\n\n  https://example.com/page/5?x=5  \n"
	r := expect(t, dir, stdin, 0, "build", "-n", "10k", "-p", "0.001", "-o", "f.bloom", "a.txt", "b.txt.gz", "-")
	for name, want := range map[string]string{"keys": "2012", "new": "2001", "duplicates": "11", "k": "10", "output": "f.bloom"} {
		if got := summaryValue(t, r.stderr, name); got != want {
			t.Errorf("summary %s: got %q; want %q", name, got, want)
		}
	}
	if r.stdout != "" {
		t.Errorf("build -o wrote to stdout: %q", r.stdout)
	}

	r = expect(t, dir, "", 0, "check", "f.bloom", "https://example.com/page/0?x=0", "https://example.com/page/1999?x=4", "https://example.com/stdin/1")
	want := "https://example.com/page/0?x=0\tpresent\nhttps://example.com/page/1999?x=4\tpresent\nhttps://example.com/stdin/1\tpresent\n"
	if r.stdout != want {
		t.Errorf("check stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	r = expect(t, dir, "", 1, "check", "f.bloom", "https://example.com/page/0?x=0", "https://example.com/never")
	if want := "https://example.com/page/0?x=0\tpresent\nhttps://example.com/never\tabsent\n"; r.stdout != want {
		t.Errorf("check stdout:\n%s\nwant:\n%s", r.stdout, want)
	}

	// Keys from stdin: every added key is present, no false negatives.
	r = expect(t, dir, urls(0, 2000), 0, "check", "f.bloom")
	if n := strings.Count(r.stdout, "\tpresent\n"); n != 2000 {
		t.Errorf("check of 2000 added keys from stdin: %d present", n)
	}
	// Quiet: the exit status alone.
	if r := expect(t, dir, "", 1, "check", "-q", "f.bloom", "https://example.com/never"); r.stdout != "" {
		t.Errorf("check -q printed %q", r.stdout)
	}
	// Flags after arguments.
	expect(t, dir, "", 0, "check", "f.bloom", "https://example.com/stdin/1", "-q")
}

func TestBuildToStdout(t *testing.T) {
	dir := t.TempDir()
	r := expect(t, dir, urls(0, 100), 0, "build", "-n", "1000", "--progress", "0")
	writeFile(t, filepath.Join(dir, "f.bloom"), r.stdout)
	if got := summaryValue(t, r.stderr, "output"); got != "stdout" {
		t.Errorf("output: got %q; want stdout", got)
	}
	expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/page/99?x=1")
}

func TestProgressLines(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.txt"), urls(0, 300_000))
	r := expect(t, dir, "", 0, "build", "-n", "300k", "-o", "f.bloom", "--progress", "1ms", "in.txt")
	// stderr is a pipe here: plain lines, no carriage returns or escapes.
	if strings.ContainsAny(r.stderr, "\r\033") {
		t.Errorf("progress on a pipe has terminal control characters:\n%q", r.stderr)
	}
	line := regexp.MustCompile(`(?m)^edgebloom: build: \d+ keys, [\d.]+[kMG]? keys/s, [\d.]+% of [\d.]+ [KMG]iB, ETA \S+$`)
	if !line.MatchString(r.stderr) {
		t.Errorf("no progress line with percentage and ETA in:\n%s", r.stderr)
	}
	// Stdin of unknown size: no percentage, no ETA.
	r = expect(t, dir, urls(0, 300_000), 0, "build", "-n", "300k", "-o", "g.bloom", "--progress", "1ms")
	line = regexp.MustCompile(`(?m)^edgebloom: build: \d+ keys, [\d.]+[kMG]? keys/s$`)
	if !line.MatchString(r.stderr) {
		t.Errorf("no progress line for stdin in:\n%s", r.stderr)
	}
	r = expect(t, dir, "", 0, "build", "-n", "300k", "-o", "h.bloom", "--progress", "0", "in.txt")
	if strings.Contains(r.stderr, "edgebloom: build:") {
		t.Errorf("--progress 0 printed progress:\n%s", r.stderr)
	}
}

// TestProgressBar runs build on a terminal, through script(1) from
// util-linux, which gives the child a pseudo-terminal.
func TestProgressBar(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a terminal")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.txt"), urls(0, 300_000))
	cmd := exec.Command(script, "-qec", binary+" build -n 300k -o f.bloom --progress 1ms in.txt", "/dev/null")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	bar := regexp.MustCompile(`\r\033\[K\[=* *\] +\d+%  [\d.]+[kM]? keys  [\d.]+[kM]? keys/s  ETA \S+`)
	if !bar.Match(out) {
		t.Errorf("no progress bar in:\n%q", out)
	}
	if strings.Contains(string(out), "edgebloom: build: ") {
		t.Errorf("plain progress lines on a terminal:\n%q", out)
	}
	// The bar is cleared before the summary.
	if !regexp.MustCompile(`\r\033\[Kkeys +300000\r?\n`).Match(out) {
		t.Errorf("summary does not replace the bar:\n%q", out)
	}
}

func TestAdd(t *testing.T) {
	dir := t.TempDir()
	expect(t, dir, urls(0, 10), 0, "build", "-n", "1000", "-o", "f.bloom")
	expect(t, dir, "", 1, "check", "-q", "f.bloom", "https://example.com/new")
	r := expect(t, dir, "", 0, "add", "f.bloom", "https://example.com/new", "https://example.com/page/3?x=3")
	if !strings.HasPrefix(r.stderr, "2 keys, 1 new, 1 already present; 11 in f.bloom") {
		t.Errorf("add: stderr %q", r.stderr)
	}
	expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/new")
	expect(t, dir, "https://example.com/s1\nhttps://example.com/s2\n", 0, "add", "f.bloom")
	expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/s1", "https://example.com/s2", "https://example.com/new")
}

func TestInfo(t *testing.T) {
	dir := t.TempDir()
	expect(t, dir, urls(0, 1000), 0, "build", "-n", "1000", "-p", "0.01", "-o", "f.bloom")
	r := expect(t, dir, "", 0, "info", "f.bloom")
	for name, want := range map[string]string{"kind": "classic", "bits": "9586 (1.2 KiB)", "k": "7", "capacity": "1000", "target FPR": "1%", "over capacity": "false"} {
		if got := summaryValue(t, r.stdout, name); got != want {
			t.Errorf("info %s: got %q; want %q", name, got, want)
		}
	}
	r = expect(t, dir, "", 0, "info", "--json", "f.bloom")
	var got fileInfo
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("info --json: %v\n%s", err, r.stdout)
	}
	if got.Kind != "classic" || got.Bits != 9586 || got.Hashes != 7 || got.Count < 990 || got.Count > 1000 || got.TargetFPR != 0.01 ||
		got.EstimatedCount == nil || *got.EstimatedCount < 950 || *got.EstimatedCount > 1050 ||
		got.FillRatio < 0.45 || got.FillRatio > 0.55 || got.Size != 64+8*150+8 {
		t.Errorf("info --json: got %+v", got)
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	expect(t, dir, urls(0, 500), 0, "build", "-n", "1000", "-o", "a.bloom")
	expect(t, dir, urls(500, 500), 0, "build", "-n", "1000", "-o", "b.bloom")
	expect(t, dir, "", 0, "merge", "a.bloom", "b.bloom", "-o", "c.bloom")
	r := expect(t, dir, urls(0, 1000), 0, "check", "c.bloom")
	if n := strings.Count(r.stdout, "\tpresent\n"); n != 1000 {
		t.Errorf("merged filter has %d of 1000 keys", n)
	}
	expect(t, dir, "", 1, "check", "-q", "a.bloom", "https://example.com/page/999?x=5")

	expect(t, dir, urls(0, 10), 0, "build", "-n", "2000", "-o", "big.bloom")
	r = expect(t, dir, "", 2, "merge", "-o", "d.bloom", "a.bloom", "big.bloom")
	if want := "edgebloom: merge: a.bloom and big.bloom are incompatible: 9586 bits and 19171 bits (build both with the same -n and -p)\n"; r.stderr != want {
		t.Errorf("merge of different sizes: stderr %q; want %q", r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.bloom")); !os.IsNotExist(err) {
		t.Errorf("refused merge left d.bloom behind: %v", err)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "text"), "hello, not a filter at all, but long enough to have a header's worth of bytes in it\n")
	writeFile(t, filepath.Join(dir, "short"), "EBLM")
	expect(t, dir, urls(0, 10), 0, "build", "-n", "100", "-o", "f.bloom")
	data, err := os.ReadFile(filepath.Join(dir, "f.bloom"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "truncated.bloom"), string(data[:len(data)-20]))
	data[70] ^= 1
	writeFile(t, filepath.Join(dir, "flipped.bloom"), string(data))

	for _, c := range []struct {
		name string
		args []string
		want string // the whole of stderr, or a prefix ending in "..."
	}{
		{"no command", nil, "Usage: edgebloom <command>..."},
		{"unknown command", []string{"frob"}, `edgebloom: unknown command "frob" (run edgebloom -h)`},
		{"unknown flag", []string{"build", "-x"}, "edgebloom: build: flag provided but not defined: -x (run edgebloom build -h)"},
		{"bad -n", []string{"build", "-n", "lots"}, `edgebloom: build: invalid value "lots" for flag -n: not a whole number of keys (run edgebloom build -h)`},
		{"missing -n", []string{"build", "-o", "x.bloom"}, "edgebloom: build: -n is required: the number of keys the filter is made for"},
		{"bad -p", []string{"build", "-n", "10", "-p", "1.5", "-o", "x.bloom"}, "edgebloom: build: -p 1.5: the false-positive rate must be in (0, 1)"},
		{"missing input", []string{"build", "-n", "10", "-o", "x.bloom", "nope.txt"}, "edgebloom: build: stat nope.txt: no such file or directory"},
		{"missing filter", []string{"check", "nope.bloom", "k"}, "edgebloom: check: open nope.bloom: no such file or directory"},
		{"text file", []string{"check", "text", "k"}, "edgebloom: check: text: not an edgebloom filter"},
		{"short file", []string{"info", "short"}, "edgebloom: info: short: not an edgebloom filter (4 bytes, shorter than a header)"},
		{"truncated", []string{"check", "truncated.bloom", "k"}, "edgebloom: check: truncated.bloom: truncated: the file is 172 bytes, its header says 192"},
		{"flipped bit", []string{"info", "flipped.bloom"}, "edgebloom: info: flipped.bloom: checksum mismatch"},
		{"add to text", []string{"add", "text", "k"}, "edgebloom: add: text: not an edgebloom filter"},
		{"merge one", []string{"merge", "-o", "x.bloom", "f.bloom"}, "edgebloom: merge: want at least two filters, got 1"},
		{"merge without -o", []string{"merge", "f.bloom", "f.bloom"}, "edgebloom: merge: -o is required"},
		{"info two", []string{"info", "f.bloom", "f.bloom"}, "edgebloom: info: want one filter file, got 2 arguments"},
		{"check nothing", []string{"check"}, "edgebloom: check: missing the filter file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := expect(t, dir, "", 2, c.args...)
			if prefix, ok := strings.CutSuffix(c.want, "..."); ok {
				if !strings.HasPrefix(r.stderr, prefix) {
					t.Errorf("stderr: got %q; want it to start with %q", r.stderr, prefix)
				}
			} else if r.stderr != c.want+"\n" {
				t.Errorf("stderr: got %q; want %q", r.stderr, c.want+"\n")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.bloom")); !os.IsNotExist(err) {
		t.Errorf("a failed command left x.bloom behind: %v", err)
	}
}

func TestHelp(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"-h"}, {"help"}, {"--help"}} {
		if r := expect(t, dir, "", 0, args...); !strings.HasPrefix(r.stdout, "Usage: edgebloom <command>") {
			t.Errorf("%q: stdout %q", args, r.stdout)
		}
	}
	for _, c := range commands {
		for _, args := range [][]string{{c.name, "-h"}, {"help", c.name}} {
			r := expect(t, dir, "", 0, args...)
			if !strings.HasPrefix(r.stdout, "Usage: edgebloom "+c.name+" ") {
				t.Errorf("%q: stdout %q", args, r.stdout)
			}
		}
	}
}

// TestVersion checks that the command prints the version of version.txt,
// the one every copy is written from (tools/release.mjs), as
// "edgebloom X.Y.Z", however it is asked.
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	v, err := os.ReadFile("../../version.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := "edgebloom " + strings.TrimSpace(string(v)) + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		if r := expect(t, dir, "", 0, args...); r.stdout != want {
			t.Errorf("edgebloom %q: stdout %q; want %q", args, r.stdout, want)
		}
	}
	if r := expect(t, dir, "", 2, "version", "extra"); !strings.Contains(r.stderr, "version takes no arguments") {
		t.Errorf("edgebloom version extra: stderr %q", r.stderr)
	}
	if r := expect(t, dir, "", 0, "help"); !strings.Contains(r.stdout, "\n  version ") {
		t.Errorf("edgebloom help lists no version command:\n%s", r.stdout)
	}
}

func TestCanonical(t *testing.T) {
	dir := t.TempDir()
	// Four spellings of one URL, one other URL, and a line that is no URL.
	in := "HTTPS://Example.COM:443/a/./b?y=2&x=1#top\n" +
		"https://example.com/a/b?x=1&y=2&utm_source=news\n" +
		"https://example.com/a/c/../b?x=1&y=2\n" +
		"https://example.com/a/b?x=1&y=2\n" +
		"https://example.com/other\n" +
		"no url here\n"
	r := expect(t, dir, in, 0, "build", "--canonical", "-n", "1000", "-o", "c.bloom")
	for name, want := range map[string]string{"keys": "5", "new": "2", "duplicates": "3"} {
		if got := summaryValue(t, r.stderr, name); got != want {
			t.Errorf("summary %s: got %q; want %q", name, got, want)
		}
	}
	if got := summaryValue(t, r.stderr, "invalid"); !strings.HasPrefix(got, "1, skipped (first: urlkey: ") {
		t.Errorf("summary invalid: got %q", got)
	}
	// Without --canonical the same lines are six keys, none a duplicate.
	r = expect(t, dir, in, 0, "build", "-n", "1000", "-o", "raw.bloom")
	if got := summaryValue(t, r.stderr, "new"); got != "6" {
		t.Errorf("summary new without --canonical: got %q; want 6", got)
	}

	// The filter holds canonical keys: check finds other spellings only
	// with --canonical, and prints each key as given.
	r = expect(t, dir, "", 0, "check", "--canonical", "c.bloom", "https://EXAMPLE.com/a/b?y=2&x=1&fbclid=1")
	if want := "https://EXAMPLE.com/a/b?y=2&x=1&fbclid=1\tpresent\n"; r.stdout != want {
		t.Errorf("check --canonical: got %q; want %q", r.stdout, want)
	}
	expect(t, dir, "", 1, "check", "-q", "c.bloom", "https://EXAMPLE.com/a/b?y=2&x=1&fbclid=1")

	// add --canonical, then the canonical spelling is present.
	expect(t, dir, "https://Example.com/new/?utm_medium=email\n", 0, "add", "--canonical", "c.bloom")
	expect(t, dir, "", 0, "check", "-q", "c.bloom", "https://example.com/new/")

	// A key that is no URL: reported on stderr, exit status 2, the other
	// keys still answered (check) or added (add).
	r = expect(t, dir, "", 2, "check", "--canonical", "c.bloom", "ftp://example.com/", "https://example.com/other")
	if r.stdout != "https://example.com/other\tpresent\n" || !strings.HasPrefix(r.stderr, "edgebloom: check: urlkey: ") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("check of an invalid key: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	expect(t, dir, "", 2, "add", "--canonical", "c.bloom", "mailto:x@example.com", "https://example.com/added")
	expect(t, dir, "", 0, "check", "-q", "c.bloom", "https://example.com/added")

	// --keep-tracking keeps utm parameters apart.
	r = expect(t, dir, "https://example.com/?utm_source=a\nhttps://example.com/?utm_source=b\n", 0,
		"build", "--canonical", "--keep-tracking", "-n", "100", "-o", "k.bloom")
	if got := summaryValue(t, r.stderr, "new"); got != "2" {
		t.Errorf("--keep-tracking: new %q; want 2", got)
	}
	r = expect(t, dir, "", 2, "build", "--keep-tracking", "-n", "100", "-o", "k.bloom")
	if want := "edgebloom: build: --keep-tracking needs --canonical\n"; r.stderr != want {
		t.Errorf("--keep-tracking alone: stderr %q; want %q", r.stderr, want)
	}
}

func TestWindowRotate(t *testing.T) {
	dir := t.TempDir()
	// Three generations: a key stays for the period it was added in and two
	// rotations more.
	r := expect(t, dir, "https://example.com/day1\n", 0, "build", "-n", "1000", "--window", "3", "-o", "w.bloom")
	if got := summaryValue(t, r.stderr, "generations"); got != "3 of 9586 bits each" {
		t.Errorf("summary generations: got %q", got)
	}
	expect(t, dir, "", 0, "rotate", "w.bloom")
	expect(t, dir, "", 0, "add", "w.bloom", "https://example.com/day2")
	expect(t, dir, "", 0, "check", "-q", "w.bloom", "https://example.com/day1", "https://example.com/day2")
	expect(t, dir, "", 0, "rotate", "w.bloom")
	expect(t, dir, "", 0, "add", "w.bloom", "https://example.com/day3")
	expect(t, dir, "", 0, "check", "-q", "w.bloom", "https://example.com/day1", "https://example.com/day2", "https://example.com/day3")

	r = expect(t, dir, "", 0, "rotate", "w.bloom") // day 1 leaves the window
	if want := "rotated w.bloom: dropped the oldest generation (1 keys); 2 keys in 3 generations\n"; r.stderr != want {
		t.Errorf("rotate: stderr %q; want %q", r.stderr, want)
	}
	r = expect(t, dir, "", 1, "check", "w.bloom", "https://example.com/day1", "https://example.com/day2", "https://example.com/day3")
	if want := "https://example.com/day1\tabsent\nhttps://example.com/day2\tpresent\nhttps://example.com/day3\tpresent\n"; r.stdout != want {
		t.Errorf("check after rotations:\n%s\nwant:\n%s", r.stdout, want)
	}
	expect(t, dir, "", 0, "rotate", "w.bloom")
	expect(t, dir, "", 0, "rotate", "w.bloom")
	expect(t, dir, "", 1, "check", "-q", "w.bloom", "https://example.com/day3")

	r = expect(t, dir, "", 0, "info", "--json", "w.bloom")
	var got fileInfo
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "window" || got.Generations != 3 || got.Bits != 3*9586 || got.Count != 0 || got.Capacity != 1000 {
		t.Errorf("info --json of a window: %+v", got)
	}

	// Rotate refuses other kinds; merge refuses windows.
	expect(t, dir, "", 0, "build", "-n", "1000", "-o", "c.bloom")
	r = expect(t, dir, "", 2, "rotate", "c.bloom")
	if want := "edgebloom: rotate: c.bloom: a classic filter has no generations to rotate; build one with --window\n"; r.stderr != want {
		t.Errorf("rotate of a classic filter: stderr %q; want %q", r.stderr, want)
	}
	r = expect(t, dir, "", 2, "merge", "-o", "m.bloom", "c.bloom", "w.bloom")
	if want := "edgebloom: merge: w.bloom: cannot merge window filters, only classic or blocked ones\n"; r.stderr != want {
		t.Errorf("merge with a window: stderr %q; want %q", r.stderr, want)
	}
}

func TestWriterLock(t *testing.T) {
	dir := t.TempDir()
	expect(t, dir, urls(0, 10), 0, "build", "-n", "1000", "-o", "f.bloom")

	// A first add holds the file open for writing while it reads stdin.
	first := exec.Command(binary, "add", "f.bloom")
	first.Dir = dir
	stdin, err := first.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// It opens the file before it reads stdin, so once it has read more
	// than a pipe holds (64 KiB on Linux) it has the lock.
	if _, err := io.WriteString(stdin, urls(1000, 5000)); err != nil {
		t.Fatal(err)
	}
	r := edgebloom(t, dir, "", "add", "f.bloom", "https://example.com/second")
	want := "edgebloom: add: f.bloom: the file is open for writing elsewhere\n"
	if r.status != 2 || r.stderr != want {
		t.Errorf("second writer: status %d, stderr %q; want 2, %q", r.status, r.stderr, want)
	}
	r = edgebloom(t, dir, "", "build", "-n", "1000", "-o", "f.bloom")
	if r.status != 2 || r.stderr != "edgebloom: build: f.bloom: the file is open for writing elsewhere\n" {
		t.Errorf("build over a locked file: status %d, stderr %q", r.status, r.stderr)
	}
	// Readers need no lock.
	expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/page/1?x=1")

	stdin.Close()
	if err := first.Wait(); err != nil {
		t.Fatalf("first add: %v\n%s", err, firstErr.String())
	}
	expect(t, dir, "", 0, "check", "-q", "f.bloom", "https://example.com/page/1005?x=4")
}

// TestBlockedForParquet: --for-parquet makes a power of two of blocks, the
// bitset every Parquet reader accepts, and needs --kind blocked.
func TestBlockedForParquet(t *testing.T) {
	dir := t.TempDir()
	r := expect(t, dir, urls(0, 1000), 0, "build", "--kind", "blocked", "--for-parquet", "-n", "1000", "-p", "0.01", "-o", "p.bloom")
	if got := summaryValue(t, r.stderr, "blocks"); got != "64 of 256 bits" {
		t.Errorf("build --for-parquet summary blocks: got %q; want 64 of 256 bits (43 rounded up)", got)
	}
	data, err := os.ReadFile(filepath.Join(dir, "p.bloom"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(data) - 64 - 8; n != 64*32 {
		t.Errorf("payload of %d bytes; want %d", n, 64*32)
	}
	r = expect(t, dir, "", 2, "build", "--for-parquet", "-n", "1000", "-o", "q.bloom")
	if !strings.Contains(r.stderr, "--for-parquet needs --kind blocked") {
		t.Errorf("--for-parquet without --kind blocked: stderr %q", r.stderr)
	}
	r = expect(t, dir, "", 2, "build", "--kind", "blocked", "--for-parquet", "-n", "100M", "-p", "0.01", "-o", "q.bloom")
	if !strings.Contains(r.stderr, "MaxParquetBytes (128 MiB") {
		t.Errorf("--for-parquet over 128 MiB: stderr %q", r.stderr)
	}
}

// TestBlocked builds, checks, adds to, inspects and merges split-block
// filters, and checks that the file's payload is the Parquet bitset.
func TestBlocked(t *testing.T) {
	dir := t.TempDir()
	r := expect(t, dir, urls(0, 1000), 0, "build", "--kind", "blocked", "-n", "1000", "-p", "0.01", "-o", "a.bloom")
	for name, want := range map[string]string{"keys": "1000", "blocks": "43 of 256 bits", "bits": "11008 (1.3 KiB)", "k": "8"} {
		if got := summaryValue(t, r.stderr, name); got != want {
			t.Errorf("build summary %s: got %q; want %q", name, got, want)
		}
	}
	r = expect(t, dir, urls(0, 1000), 0, "check", "a.bloom")
	if n := strings.Count(r.stdout, "\tpresent\n"); n != 1000 {
		t.Errorf("check: %d of 1000 added keys present", n)
	}
	expect(t, dir, "", 1, "check", "-q", "a.bloom", "https://example.com/new")
	r = expect(t, dir, "", 0, "add", "a.bloom", "https://example.com/new")
	if !strings.HasPrefix(r.stderr, "1 keys, 1 new") && !strings.HasPrefix(r.stderr, "1 key, 1 new") {
		t.Errorf("add: stderr %q", r.stderr)
	}
	expect(t, dir, "", 0, "check", "-q", "a.bloom", "https://example.com/new")

	r = expect(t, dir, "", 0, "info", "--json", "a.bloom")
	var got fileInfo
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("info --json: %v\n%s", err, r.stdout)
	}
	if got.Kind != "blocked" || got.Bits != 43*256 || got.Blocks != 43 || got.Hashes != 8 || got.Capacity != 1000 || got.TargetFPR != 0.01 ||
		got.Count < 990 || got.Count > 1001 || got.EstimatedFPR < 0.005 || got.EstimatedFPR > 0.01 || got.Size != 64+43*32+8 {
		t.Errorf("info --json: got %+v", got)
	}

	// The payload is the bitset of a Parquet split-block filter.
	data, err := os.ReadFile(filepath.Join(dir, "a.bloom"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := bloom.BlockedFromParquet(data[64 : len(data)-8])
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasString("https://example.com/new") || !f.HasString("https://example.com/page/7?x=0") {
		t.Errorf("the payload read as a Parquet bitset lacks added keys")
	}

	expect(t, dir, urls(1000, 1000), 0, "build", "--kind", "blocked", "-n", "1000", "-o", "b.bloom")
	expect(t, dir, "", 0, "merge", "-o", "c.bloom", "a.bloom", "b.bloom")
	r = expect(t, dir, urls(0, 2000), 0, "check", "c.bloom")
	if n := strings.Count(r.stdout, "\tpresent\n"); n != 2000 {
		t.Errorf("merged blocked filter has %d of 2000 keys", n)
	}
	r = expect(t, dir, "", 0, "info", "c.bloom")
	if got := summaryValue(t, r.stdout, "kind"); got != "blocked" {
		t.Errorf("merged kind: got %q; want blocked", got)
	}
	if got := summaryValue(t, r.stdout, "blocks"); got != "43 of 256 bits" {
		t.Errorf("merged blocks: got %q; want 43 of 256 bits", got)
	}

	expect(t, dir, urls(0, 10), 0, "build", "-n", "1000", "-o", "classic.bloom")
	expect(t, dir, urls(0, 10), 0, "build", "--kind", "blocked", "-n", "2000", "-o", "big.bloom")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "-o", "x.bloom", "a.bloom", "classic.bloom"}, "edgebloom: merge: a.bloom and classic.bloom are incompatible: a blocked and a classic filter"},
		{[]string{"merge", "-o", "x.bloom", "a.bloom", "big.bloom"}, "edgebloom: merge: a.bloom and big.bloom are incompatible: 11008 bits and 21760 bits (build both with the same -n and -p)"},
		{[]string{"build", "--kind", "cuckoo", "-n", "10", "-o", "x.bloom"}, `edgebloom: build: --kind "cuckoo": the kind must be classic or blocked`},
		{[]string{"build", "--kind", "blocked", "--window", "3", "-n", "10", "-o", "x.bloom"}, "edgebloom: build: --kind blocked and --window: a window's generations are classic filters"},
		{[]string{"build", "--kind", "blocked", "-n", "1T", "-p", "1e-9", "-o", "x.bloom"}, "edgebloom: build: ..."},
		{[]string{"rotate", "a.bloom"}, "edgebloom: rotate: a.bloom: a blocked filter has no generations to rotate; build one with --window"},
	} {
		r := expect(t, dir, "", 2, c.args...)
		if prefix, ok := strings.CutSuffix(c.want, "..."); ok {
			if !strings.HasPrefix(r.stderr, prefix) {
				t.Errorf("%q: stderr %q; want it to start with %q", c.args, r.stderr, prefix)
			}
		} else if r.stderr != c.want+"\n" {
			t.Errorf("%q: stderr %q; want %q", c.args, r.stderr, c.want+"\n")
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.bloom")); !os.IsNotExist(err) {
		t.Errorf("a failed command left x.bloom behind: %v", err)
	}
}
