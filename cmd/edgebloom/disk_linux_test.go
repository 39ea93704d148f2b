package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tmpfsEnv makes the test binary a helper: in the mount namespace of its
// own that the test gives it, it mounts a tmpfs of that size over its
// working directory and runs the shell script of its arguments there.
const tmpfsEnv = "EDGEBLOOM_TEST_TMPFS"

func init() {
	size := os.Getenv(tmpfsEnv)
	if size == "" {
		return
	}
	fail := func(err error) { fmt.Fprintln(os.Stderr, "tmpfs helper:", err); os.Exit(3) }
	dir, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	// Mounts made here stay here: nothing reaches the machine's namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		fail(err)
	}
	if err := os.Chdir(dir); err != nil { // into the tmpfs just mounted
		fail(err)
	}
	fail(syscall.Exec("/bin/sh", []string{"sh", "-c", os.Args[len(os.Args)-1]}, os.Environ()))
}

// onSmallDisk runs script with sh in dir, with a tmpfs of size mounted over
// dir, in a user and mount namespace of its own (so it needs no root), with
// the edgebloom binary on PATH. It returns the script's output.
func onSmallDisk(t *testing.T, dir, size, stdin, script string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), tmpfsEnv+"="+size, "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the script on a %s tmpfs (needs user namespaces, or root): %v\n%s", size, err, out.String())
	}
	return out.String()
}

// TestFullDisk builds filters too large for a 1 MiB file system: each build
// fails with one line saying so, with no crash (SIGBUS), no file left
// behind, and the filter that was there before still whole.
func TestFullDisk(t *testing.T) {
	out := onSmallDisk(t, t.TempDir(), "1m", urls(0, 5000), `
exec 2>&1
keys=$(cat)
echo "$keys" | edgebloom build -n 10000 -o f.bloom 2>/dev/null; echo "status $?"
for kind in "" "--window 3" "--kind blocked"; do
	echo "$keys" | edgebloom build -n 10M $kind -o f.bloom; echo "status $?"
done
echo "$keys" | edgebloom build -n 10M -o new.bloom; echo "status $?"
echo "$keys" | edgebloom check -q f.bloom; echo "status $?"
edgebloom info new.bloom; echo "status $?"
ls -A
`)
	t.Logf("on a 1 MiB tmpfs:\n%s", out)
	if strings.Contains(out, "SIGBUS") || strings.Contains(out, "goroutine") {
		t.Fatalf("a command crashed on a full disk:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"status 0",
		"edgebloom: build: create f.bloom: no space left on device", "status 2",
		"edgebloom: build: write f.bloom: no space left on device", "status 2",
		"edgebloom: build: write f.bloom: no space left on device", "status 2",
		"edgebloom: build: create new.bloom: no space left on device", "status 2",
		"status 0", // the old f.bloom holds its keys
		"edgebloom: info: open new.bloom: no such file or directory", "status 2",
		"f.bloom",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines; want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		prefix, suffix, cut := strings.Cut(w, " ... ")
		if cut && !(strings.HasPrefix(lines[i], prefix) && strings.HasSuffix(lines[i], suffix)) || !cut && lines[i] != w {
			t.Errorf("line %d: %q; want %q", i+1, lines[i], w)
		}
	}
}
