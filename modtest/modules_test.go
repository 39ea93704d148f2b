// Package modtest builds every published module of the repository as a
// consumer would once it is released: outside the workspace (GOWORK=off),
// through "go get" and "go install" of version.txt's version from a module proxy
// (GOPROXY=file://...) that this test writes from the checkout: the files
// git tracks (and new ones it does not ignore) of each module directory,
// without its nested modules, zipped as a proxy serves them. Third-party
// modules come from the module cache's download directory, itself a proxy,
// and what it lacks from GOPROXY: a cache filled by building the workspace
// holds the zips and go.mod files of the modules it built, not the .info
// files and go.mod files of every module of a consumer's graph, which "go
// list -m all" reads. On a warm machine nothing leaves it. The consumer's
// go.sum starts as the published go.sum files together, so what GOPROXY
// serves is checked against the hashes the repository pins. A replace
// directive in a published go.mod, a require of a version the release will
// not have, or a module that only builds inside the workspace fails here.
package modtest

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const root = "github.com/edgebloom/edgebloom"

// version is the version the modules are published at: version.txt's
// (RELEASING.md), which their go.mod files require of each other.
var version = func() string {
	b, err := os.ReadFile("../version.txt")
	if err != nil {
		panic(err)
	}
	return "v" + strings.TrimSpace(string(b))
}()

// The published modules: directory in the repository, and a package of it
// that a consumer imports (or, for a command, installs).
var published = []struct {
	dir, pkg string
	command  bool
}{
	{".", root + "/bloom", false},
	{"redisfilter", root + "/redisfilter", false},
	{"urlkey", root + "/urlkey", false},
	{"colly", root + "/colly/bloomstorage", false},
	{"cmd/edgebloom", root + "/cmd/edgebloom", true},
}

// modulePath is the path of the published module in directory dir.
func modulePath(dir string) string {
	if dir == "." {
		return root
	}
	return root + "/" + dir
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// moduleFiles lists the files of the module in dir (relative to it): what
// git tracks or would track, minus nested modules' directories.
func moduleFiles(t *testing.T, repo, dir string) []string {
	t.Helper()
	out := run(t, filepath.Join(repo, dir), os.Environ(), "git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", ".")
	var files, nested []string
	all := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	for _, f := range all {
		if path.Base(f) == "go.mod" && f != "go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	for _, f := range all {
		skip := false
		for _, n := range nested {
			skip = skip || strings.HasPrefix(f, n)
		}
		if _, err := os.Lstat(filepath.Join(repo, dir, f)); err != nil {
			skip = true // deleted from the work tree, not yet from the index
		}
		if !skip {
			files = append(files, f)
		}
	}
	return files
}

// writeProxy writes the published modules at version to a GOPROXY
// directory and returns it.
func writeProxy(t *testing.T, repo string) string {
	t.Helper()
	proxy := t.TempDir()
	for _, m := range published {
		modPath := modulePath(m.dir)
		at := filepath.Join(proxy, filepath.FromSlash(modPath), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			t.Fatal(err)
		}
		gomod, err := os.ReadFile(filepath.Join(repo, m.dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, f := range moduleFiles(t, repo, m.dir) {
			data, err := os.ReadFile(filepath.Join(repo, m.dir, f))
			if err != nil {
				t.Fatal(err)
			}
			w, err := zw.Create(modPath + "@" + version + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		info, _ := json.Marshal(map[string]string{"Version": version, "Time": "2026-01-01T00:00:00Z"})
		for name, data := range map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  gomod,
			version + ".zip":  buf.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return proxy
}

// consumerEnv is a consumer's environment: no workspace; the proxy above,
// then the module cache's downloads, then the GOPROXY of this environment
// (a file proxy answers "not found" for a file it lacks, and the go command
// then asks the next); a fresh module cache, so no earlier download of
// v0.1.0 is reused; no checksum database, as the published modules are not
// in it (go.sum files check the rest: see seedGoSum).
func consumerEnv(t *testing.T, proxy, home string) []string {
	t.Helper()
	return goEnv(t, home, "file://"+filepath.ToSlash(proxy), "GOWORK=off", "GOFLAGS=-mod=mod -modcacherw", "GONOSUMDB=github.com/edgebloom")
}

// goEnv is this environment without its GO variables but GOCACHE: a
// module cache, GOPATH and GOBIN in home (-modcacherw in GOFLAGS lets a
// t.TempDir be removed without root), GOPROXY the proxy first, when not
// "", then the module cache's downloads, then this environment's GOPROXY,
// no checksum database, the local toolchain, and then extra.
func goEnv(t *testing.T, home, first string, extra ...string) []string {
	t.Helper()
	goenv := strings.Split(run(t, ".", os.Environ(), "go", "env", "GOMODCACHE", "GOCACHE", "GOPROXY"), "\n")
	cache, gocache, goproxy := goenv[0], goenv[1], goenv[2]
	var proxies []string
	if first != "" {
		proxies = append(proxies, first)
	}
	proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download")))
	if goproxy != "" {
		proxies = append(proxies, goproxy)
	}
	// The build cache is kept: it is keyed by content, so it cannot serve a
	// stale module, and rebuilding the standard library would take a minute.
	env := []string{"GOCACHE=" + gocache}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GO") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GOPROXY="+strings.Join(proxies, ","),
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
		"GOMODCACHE="+filepath.Join(home, "mod"),
		"GOPATH="+filepath.Join(home, "path"),
		"GOBIN="+filepath.Join(home, "bin"),
	)
	return append(env, extra...)
}

// seedGoSum gives the lines of the published modules' go.sum files: the
// hashes of every third-party module of their graphs, as the repository
// pins them. A consumer's go.sum that starts with them makes the go command
// check the modules it downloads (GOSUMDB is off) against them.
func seedGoSum(t *testing.T, repo string) string {
	t.Helper()
	var lines []string
	seen := map[string]bool{}
	for _, m := range published {
		b, err := os.ReadFile(filepath.Join(repo, m.dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line != "" && !seen[line] {
				seen[line] = true
				lines = append(lines, line)
			}
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestPublishedModulesBuildOutsideTheWorkspace(t *testing.T) {
	repo := repoRoot(t)
	for _, m := range published {
		gomod, err := os.ReadFile(filepath.Join(repo, m.dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(gomod), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "replace") {
				t.Errorf("%s/go.mod: %q: go get ignores replace directives of a dependency", m.dir, line)
			}
		}
	}
	proxy := writeProxy(t, repo)
	home := t.TempDir()
	env := consumerEnv(t, proxy, home)

	// The command, as its README line installs it.
	for _, m := range published {
		if m.command {
			run(t, ".", env, "go", "install", m.pkg+"@"+version)
			bin := filepath.Join(home, "bin", path.Base(m.pkg))
			if out := run(t, ".", env, bin, "help"); !strings.Contains(out, "build") {
				t.Errorf("%s help: %q", bin, out)
			}
			if out, want := run(t, ".", env, bin, "version"), "edgebloom "+strings.TrimPrefix(version, "v")+"\n"; out != want {
				t.Errorf("%s version: %q; want %q", bin, out, want)
			}
		}
	}

	// The libraries, imported by a new module after go get.
	consumer := t.TempDir()
	var imports, gets []string
	for _, m := range published {
		if !m.command {
			imports = append(imports, "\t_ \""+m.pkg+"\"\n")
			gets = append(gets, m.pkg+"@"+version)
		}
	}
	files := map[string]string{
		"go.mod":  "module example.com/consumer\n\ngo 1.24.0\n",
		"go.sum":  seedGoSum(t, repo),
		"main.go": "package main\n\nimport (\n" + strings.Join(imports, "") + ")\n\nfunc main() {}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(consumer, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, consumer, env, "go", append([]string{"get"}, gets...)...)
	run(t, consumer, env, "go", "build", "./...")
	got := run(t, consumer, env, "go", "list", "-m", "all")
	for _, m := range published {
		if !m.command && !strings.Contains(got, modulePath(m.dir)+" "+version+"\n") {
			t.Errorf("go list -m all lacks %s %s:\n%s", modulePath(m.dir), version, got)
		}
	}
}
