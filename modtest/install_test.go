package modtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The install steps of the README and of the Go examples, followed outside
// the repository as a newcomer follows them before any release: a new
// module in a temporary directory beside a "clone" (a link to this
// checkout at ../edgebloom), the steps run as the docs give them by bash,
// and the result built. No module proxy serves the edgebloom modules here,
// as none does before a release: a replace the steps miss fails as it
// fails for a user (the real proxy answers 403 Forbidden). Third-party
// modules come from the module cache's download directory and, for what it
// lacks, GOPROXY; the module cache itself starts empty.

// installEnv is a newcomer's environment: no workspace of theirs, a
// fresh module cache, third-party modules as consumerEnv gets them (no
// proxy serves the edgebloom modules), no checksum database (the go.sum
// the steps start with, the repository's, checks them).
func installEnv(t *testing.T, home string) []string {
	t.Helper()
	// -trimpath keeps the module cache's directory out of the build
	// cache's keys, so that a later run, in another temporary module
	// cache, reuses what an earlier one compiled.
	return goEnv(t, home, "", "GOFLAGS=-modcacherw -trimpath")
}

var shared struct {
	sync.Once
	dir string
	err error
}

// sharedHome is the module cache and GOPATH the install tests share, so
// that they download each module once; TestMain removes it.
func sharedHome(t *testing.T) string {
	shared.Do(func() { shared.dir, shared.err = os.MkdirTemp("", "modtest-home-") })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// newcomer makes a directory with a "clone" of the repository beside it
// at ../edgebloom and returns the directory.
func newcomer(t *testing.T, repo string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(repo, filepath.Join(dir, "edgebloom")); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "app")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return work
}

// section returns the text of page from the line starting with from up to
// the next line starting with to.
func section(t *testing.T, page, from, to string) string {
	t.Helper()
	i := strings.Index(page, "\n"+from)
	if i < 0 {
		t.Fatalf("no line starting with %q", from)
	}
	rest := page[i+1:]
	if j := strings.Index(rest, "\n"+to); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

var fence = regexp.MustCompile("(?s)```(\\w*)\\n(.*?)```")

// blocks returns the code blocks of text in language lang.
func blocks(text, lang string) []string {
	var out []string
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		if m[1] == lang {
			out = append(out, m[2])
		}
	}
	return out
}

// modules are the published library modules, longest path first.
func modules() []string {
	var out []string
	for _, m := range published {
		if !m.command {
			out = append(out, modulePath(m.dir))
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// moduleOf returns the published module that provides package pkg, or "".
func moduleOf(pkg string) string {
	for _, m := range modules() {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	return ""
}

// A snippet is a Go block of the README that starts with its imports: the
// body of a main function.
type snippet struct {
	imports, body string
	module        string // the edgebloom module it imports
}

func (s snippet) program() string {
	return "package main\n\n" + s.imports + "\n\nfunc main() {\n" + s.body + "\n}\n"
}

var importDecl = regexp.MustCompile(`(?s)^(import \([^)]*\)|import "[^"]*")\n`)

func snippets(t *testing.T, readme string) []snippet {
	t.Helper()
	var out []snippet
	for _, b := range blocks(readme, "go") {
		m := importDecl.FindStringSubmatch(b)
		if m == nil {
			continue
		}
		s := snippet{imports: m[1], body: strings.TrimSpace(b[len(m[0]):])}
		for _, q := range regexp.MustCompile(`"[^"]+"`).FindAllString(m[1], -1) {
			p, _ := strconv.Unquote(q)
			if mod := moduleOf(p); mod != "" {
				s.module = mod
			}
		}
		if s.module == "" {
			t.Fatalf("a Go block of the README imports no edgebloom package:\n%s", b)
		}
		out = append(out, s)
	}
	return out
}

func bash(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	return run(t, dir, env, "bash", "-euo", "pipefail", "-c", script)
}

// getLine is an install line's go get of every package of an edgebloom
// module at the version its replace gives: the module is group 1.
var getLine = regexp.MustCompile(`go get (` + regexp.QuoteMeta(root) + `[^\s@]*)/\.\.\.@v`)

// installLine finds the module an install line adds: by go get, or by a
// go mod edit -require, which is run all the same and must then build.
var installLine = regexp.MustCompile(`(?:go get |-require=)(` + regexp.QuoteMeta(root) + `[^\s@]*?)(?:/\.\.\.)?@v`)

// TestReadmeInstall follows each Go line of the README's Install and of
// docs/install.md's steps from a clone as a newcomer does: in a new, empty
// module (go mod init, no code, no go.sum), then writes the README's Go
// code for that module (its quick start: the import block and the body of
// main), or an import of the module where the README shows none, and
// builds it; the root module's quick start is run too. The go.sum the
// steps leave must agree with the hashes the repository pins. The CLI's
// line runs the command from $(go env GOPATH)/bin, where docs/install.md
// says it is.
func TestReadmeInstall(t *testing.T) {
	repo := repoRoot(t)
	readme := readDoc(t, repo, "README.md")
	install := section(t, readme, "## Install", "## Quick start") +
		section(t, readDoc(t, repo, "docs/install.md"), "## From a clone", "## Once a release exists")
	code := snippets(t, readme)
	home := sharedHome(t)
	env := installEnv(t, home)
	pinned := goSumLines(seedGoSum(t, repo))

	var lines []string
	for _, block := range blocks(install, "sh") {
		for _, line := range strings.Split(block, "\n") {
			if (strings.HasPrefix(line, "go ") || strings.Contains(line, " go install ")) && !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
	}
	covered := map[string]bool{}
	for _, line := range lines {
		m := installLine.FindStringSubmatch(line)
		if m == nil {
			if !strings.Contains(line, "go install") {
				t.Errorf("an install line neither adds a module nor installs the CLI: %s", line)
				continue
			}
			// The CLI, installed from the clone.
			t.Run("cli", func(t *testing.T) {
				work := newcomer(t, repo)
				bash(t, work, env, line)
				if out := run(t, work, env, filepath.Join(home, "bin", "edgebloom"), "help"); !strings.Contains(out, "build") {
					t.Errorf("edgebloom help: %q", out)
				}
			})
			continue
		}
		mod := m[1]
		covered[mod] = true
		t.Run(path.Base(mod), func(t *testing.T) {
			work := newcomer(t, repo)
			run(t, work, env, "go", "mod", "init", "example.com/app")
			bash(t, work, env, line)
			var programs []string
			for _, s := range code {
				if s.module == mod {
					programs = append(programs, s.program())
				}
			}
			if len(programs) == 0 {
				for _, p := range published {
					if modulePath(p.dir) == mod {
						programs = append(programs, "package main\n\nimport _ \""+p.pkg+"\"\n\nfunc main() {}\n")
					}
				}
			}
			if len(programs) > 1 {
				t.Fatalf("the README has %d quick starts for %s; this test builds one", len(programs), mod)
			}
			if err := os.WriteFile(filepath.Join(work, "main.go"), []byte(programs[0]), 0o644); err != nil {
				t.Fatal(err)
			}
			// What the steps left builds the code written after them:
			// no go mod tidy, no go get in between.
			run(t, work, env, "go", "build", "-o", "app", ".")
			if mod == root {
				out := run(t, work, env, filepath.Join(work, "app"))
				t.Logf("the quick start printed:\n%s", out)
			}
			for key, sum := range goSumLines(readDoc(t, work, "go.sum")) {
				if want, ok := pinned[key]; ok && want != sum {
					t.Errorf("go.sum: %s %s, and the repository pins %s", key, sum, want)
				}
			}
		})
	}
	for _, mod := range modules() {
		if !covered[mod] {
			t.Errorf("the README's Install and docs/install.md have no line for %s", mod)
		}
	}
	for _, s := range code {
		if !covered[s.module] {
			t.Errorf("the README shows code of %s and no install line for it", s.module)
		}
	}
}

func readDoc(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goSumLines maps each "module version" of a go.sum to its hash.
func goSumLines(sum string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(sum, "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			out[f[0]+" "+f[1]] = f[2]
		}
	}
	return out
}

// TestMissingReplace drops the root module's replace from docs/install.md's
// Colly line and checks that go fails as the page says, naming the module
// whose replace is missing. The module proxy here is a local one that
// answers as the public proxy answers this machine for an edgebloom
// version never published (403 Forbidden, "This module version is not
// available."), and 404 for every other module, which the next proxies
// serve; the page shows proxy.golang.org in its place.
func TestMissingReplace(t *testing.T) {
	repo := repoRoot(t)
	page := section(t, readDoc(t, repo, "docs/install.md"), "## From a clone", "## Once a release exists")
	var line string
	for _, block := range blocks(page, "sh") {
		for _, l := range strings.Split(block, "\n") {
			if m := getLine.FindStringSubmatch(l); m != nil && m[1] == root+"/colly" {
				line = l
			}
		}
	}
	rootReplace := " -replace=" + root + "=../edgebloom"
	if !strings.Contains(line, rootReplace) {
		t.Fatalf("docs/install.md: no Colly line with%s", rootReplace)
	}
	said := blocks(page, "text")
	if len(said) != 1 {
		t.Fatalf("docs/install.md's From a clone: %d text blocks, want the one with what go prints", len(said))
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/"+root+"/") {
			http.Error(w, "This module version is not available.", http.StatusForbidden)
			return
		}
		http.NotFound(w, r)
	}))
	defer proxy.Close()
	env := goEnv(t, sharedHome(t), proxy.URL, "GOFLAGS=-modcacherw -trimpath")
	work := newcomer(t, repo)
	run(t, work, env, "go", "mod", "init", "example.com/app")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Replace(line, rootReplace, "", 1))
	cmd.Dir, cmd.Env = work, env
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("without the root module's replace, the Colly line succeeded:\n%s", out)
	}
	got := strings.ReplaceAll(string(out), proxy.URL, "https://proxy.golang.org")
	for _, want := range strings.Split(strings.TrimSpace(said[0]), "\n") {
		if !strings.Contains(got, want) {
			t.Errorf("docs/install.md says go prints\n%s\nand it printed\n%s", want, got)
		}
	}
}

// TestExampleInstall runs the steps of each Go example's README that
// copy it out of the repository, in a new directory beside the clone.
func TestExampleInstall(t *testing.T) {
	repo := repoRoot(t)
	env := installEnv(t, sharedHome(t))
	for _, ex := range []string{"colly-crawler", "parquet"} {
		t.Run(ex, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(repo, "examples", ex, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			const intro = "Outside this repository"
			i := strings.Index(string(b), intro)
			if i < 0 {
				t.Fatalf("examples/%s/README.md does not say how to build it outside this repository (%q)", ex, intro)
			}
			steps := blocks(string(b)[i:], "sh")
			if len(steps) == 0 {
				t.Fatalf("examples/%s/README.md: no steps after %q", ex, intro)
			}
			work := newcomer(t, repo)
			bash(t, work, env, steps[0])
			if !strings.Contains(steps[0], "go build") {
				t.Errorf("examples/%s/README.md: the steps do not build it:\n%s", ex, steps[0])
			}
			if _, err := os.Stat(filepath.Join(work, "go.mod")); err != nil {
				t.Errorf("after the steps: %v", err)
			}
		})
	}
}
