package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
)

// linked makes dir/data/name, written by mk (nil: none), and the links
// dir/name -> data/name and dir/chain-name -> name; it returns the real
// path.
func linked(t *testing.T, dir, name string, mk func(path string)) string {
	t.Helper()
	real := filepath.Join(dir, "data", name)
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if mk != nil {
		mk(real)
	}
	if err := os.Symlink(filepath.Join("data", name), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(name, filepath.Join(dir, "chain-"+name)); err != nil {
		t.Fatal(err)
	}
	return real
}

// checkLinked fails t unless dir/link is still a link to want, and the
// file it names holds every key (checked through the real path), and no
// temporary file was left in dir or beside the real file.
func checkLinked(t *testing.T, dir, link, want string, keys ...string) {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(dir, link))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is not a link after the write (mode %v); want it to stay a link to %s", link, fi.Mode(), want)
	}
	if got, _ := os.Readlink(filepath.Join(dir, link)); got != want {
		t.Errorf("%s links to %q after the write; want %q", link, got, want)
	}
	args := append([]string{"check", "-q", filepath.Join("data", strings.TrimPrefix(link, "chain-"))}, keys...)
	if r := edgebloom(t, dir, "", args...); r.status != 0 {
		t.Errorf("after a write through %s, the file it names lacks keys (%s): %s%s", link, strings.Join(args, " "), r.stdout, r.stderr)
	}
	for _, d := range []string{dir, filepath.Join(dir, "data")} {
		names, _ := filepath.Glob(filepath.Join(d, ".*.tmp"))
		if len(names) > 0 {
			t.Errorf("temporary files left: %v", names)
		}
	}
}

// TestWritesFollowLinks runs every command that writes a filter file on a
// symbolic link to it, for every kind it writes, and through a chain of two
// links: the file the link names is replaced where it lives, and the link
// stays a link. (Before: add and rotate of a window or blocked filter, and
// build, merge and pull, renamed their new file over the link.)
func TestWritesFollowLinks(t *testing.T) {
	const key = "https://example.com/through-the-link"
	write := func(f io.WriterTo) func(string) {
		return func(path string) {
			if err := bloom.WriteFile(path, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	kinds := map[string]func(string){
		"classic": func(path string) { expect(t, filepath.Dir(path), urls(0, 10), 0, "build", "-n", "1000", "-o", path) },
		"blocked": func(path string) {
			expect(t, filepath.Dir(path), urls(0, 10), 0, "build", "-n", "1000", "--kind", "blocked", "-o", path)
		},
		"window": func(path string) {
			expect(t, filepath.Dir(path), urls(0, 10), 0, "build", "-n", "1000", "--window", "3", "-o", path)
		},
		"counting": write(must(bloom.NewCounting(1000, 0.01))),
		"scalable": write(must(bloom.NewScalable(1000, 0.01))),
	}
	for kind, mk := range kinds {
		for _, link := range []string{"f.bloom", "chain-f.bloom"} {
			t.Run("add/"+kind+"/"+link, func(t *testing.T) {
				dir := t.TempDir()
				linked(t, dir, "f.bloom", mk)
				expect(t, dir, "", 0, "add", link, key)
				checkLinked(t, dir, "f.bloom", filepath.Join("data", "f.bloom"), key)
				checkLinked(t, dir, "chain-f.bloom", "f.bloom", key)
			})
		}
	}
	t.Run("rotate/window", func(t *testing.T) {
		dir := t.TempDir()
		linked(t, dir, "f.bloom", kinds["window"])
		expect(t, dir, "", 0, "add", "f.bloom", key)
		expect(t, dir, "", 0, "rotate", "f.bloom")
		expect(t, dir, "", 0, "rotate", "chain-f.bloom")
		checkLinked(t, dir, "f.bloom", filepath.Join("data", "f.bloom"), key)
		// Rotated twice of three generations: the key is in the oldest.
		expect(t, dir, "", 0, "rotate", "f.bloom")
		expect(t, dir, "", 1, "check", "-q", filepath.Join("data", "f.bloom"), key)
	})
	for _, kind := range []string{"classic", "blocked", "window"} {
		for _, exists := range []bool{true, false} {
			name := "build/" + kind + "/new"
			if exists {
				name = "build/" + kind + "/over"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				var mk func(string)
				if exists {
					mk = kinds["classic"]
				}
				linked(t, dir, "f.bloom", mk)
				args := []string{"build", "-n", "1000", "-o", "chain-f.bloom"}
				switch kind {
				case "blocked":
					args = append(args, "--kind", "blocked")
				case "window":
					args = append(args, "--window", "2")
				}
				expect(t, dir, key+"\n", 0, args...)
				checkLinked(t, dir, "chain-f.bloom", "f.bloom", key)
				if r := expect(t, dir, "", 0, "info", filepath.Join("data", "f.bloom")); !strings.Contains(r.stdout, map[string]string{"classic": "classic", "blocked": "blocked", "window": "window"}[kind]) {
					t.Errorf("the file the link names is not the %s filter built: %s", kind, r.stdout)
				}
			})
		}
	}
	for _, kind := range []string{"classic", "blocked"} {
		t.Run("merge/"+kind, func(t *testing.T) {
			dir := t.TempDir()
			linked(t, dir, "f.bloom", kinds[kind])
			args := []string{"build", "-n", "1000", "-o"}
			if kind == "blocked" {
				args = []string{"build", "-n", "1000", "--kind", "blocked", "-o"}
			}
			expect(t, dir, key+"\n", 0, append(args, "a.bloom")...)
			expect(t, dir, urls(100, 10), 0, append(args, "b.bloom")...)
			expect(t, dir, "", 0, "merge", "-o", "f.bloom", "a.bloom", "b.bloom")
			checkLinked(t, dir, "f.bloom", filepath.Join("data", "f.bloom"), key, "https://example.com/page/100?x=2")
		})
	}
	t.Run("pull", func(t *testing.T) {
		srv := redistest.Start(t)
		dir := t.TempDir()
		linked(t, dir, "f.bloom", kinds["classic"])
		expect(t, dir, key+"\n", 0, "build", "-n", "1000", "-o", "src.bloom")
		expect(t, dir, "", 0, "push", "--name", "src", "src.bloom", srv.URL())
		expect(t, dir, "", 0, "pull", "--name", "src", srv.URL(), "chain-f.bloom")
		checkLinked(t, dir, "chain-f.bloom", "f.bloom", key)
		checkLinked(t, dir, "f.bloom", filepath.Join("data", "f.bloom"), key)
	})
}
