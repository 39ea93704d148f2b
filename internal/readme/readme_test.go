// Package readme checks the documentation against the code: every function
// and method the Go API lists of docs/go.md and docs/redis.md name exists in
// the package (as go doc shows it), and every function of the package is
// listed; every relative link of README.md and of the pages it leads to
// names a file, and a heading of it when it has a #fragment. The
// JavaScript list (docs/npm.md) is checked against js/index.d.ts by
// js/test/readme.test.js, the Go snippets by bloom/readme_test.go.
package readme

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// api is what go doc shows of a package: its functions (constructors
// included) and the methods of each type.
type api struct {
	funcs   map[string]bool
	methods map[string]map[string]bool
}

func loadAPI(t *testing.T, dir, importPath string) api {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		t.Fatal(err)
	}
	a := api{funcs: map[string]bool{}, methods: map[string]map[string]bool{}}
	for _, f := range p.Funcs {
		a.funcs[f.Name] = true
	}
	for _, ty := range p.Types {
		a.methods[ty.Name] = map[string]bool{}
		for _, f := range ty.Funcs {
			a.funcs[f.Name] = true
		}
		for _, m := range ty.Methods {
			a.methods[ty.Name][m.Name] = true
		}
	}
	return a
}

// block returns the lines of the code block that follows the line starting
// with intro in the page.
func block(t *testing.T, page, intro string) []string {
	t.Helper()
	i := strings.Index(page, "\n"+intro)
	if i < 0 {
		t.Fatalf("no line starting with %q", intro)
	}
	rest := page[i+1:]
	start := strings.Index(rest, "```")
	body := rest[strings.Index(rest[start:], "\n")+start+1:]
	return strings.Split(body[:strings.Index(body, "```")], "\n")
}

var (
	receiver = regexp.MustCompile(`^\((\w+) \*?(\w+)\)\s*`)
	name     = regexp.MustCompile(`^(\w+)`)
	listed   = regexp.MustCompile(`^[A-Z]\w*(, [A-Z]\w*)+$`)
)

// named returns the functions and the methods (type → names) that the
// lines of a Go API list name: "func F(...)", "func (f *T) M(...) / N(...)",
// "func (f *T) A, B, C", "func F(...) / G(...)" and "/ (s *T) M()".
func named(lines []string) (funcs []string, methods map[string][]string) {
	methods = map[string][]string{}
	for _, line := range lines {
		line, _, _ = strings.Cut(line, "//")
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "func ") {
			continue
		}
		recv := ""
		for _, part := range strings.Split(strings.TrimPrefix(line, "func "), " / ") {
			part = strings.TrimSpace(part)
			if m := receiver.FindStringSubmatch(part); m != nil {
				recv = m[2]
				part = part[len(m[0]):]
			}
			var names []string
			if listed.MatchString(part) {
				names = strings.Split(part, ", ")
			} else if m := name.FindStringSubmatch(part); m != nil {
				names = []string{m[1]}
			}
			for _, n := range names {
				if recv == "" {
					funcs = append(funcs, n)
				} else {
					methods[recv] = append(methods[recv], n)
				}
			}
		}
	}
	return funcs, methods
}

// check compares the API list after the line starting with intro in page
// (a path from the repository's root) with the package in dir.
func check(t *testing.T, page, intro, dir, importPath string) {
	b, err := os.ReadFile(filepath.Join("..", "..", page))
	if err != nil {
		t.Fatal(err)
	}
	a := loadAPI(t, filepath.Join("..", "..", dir), importPath)
	funcs, methods := named(block(t, string(b), intro))
	if len(funcs) < 5 {
		t.Fatalf("%s: %s lists %d functions", importPath, page, len(funcs))
	}
	seen := map[string]bool{}
	for _, f := range funcs {
		seen[f] = true
		if !a.funcs[f] {
			t.Errorf("%s lists %s.%s, which go doc does not show", page, importPath, f)
		}
	}
	for ty, ms := range methods {
		for _, m := range ms {
			if !a.methods[ty][m] {
				t.Errorf("%s lists (*%s).%s in %s, which go doc does not show", page, ty, m, importPath)
			}
		}
	}
	for f := range a.funcs {
		if !seen[f] {
			t.Errorf("%s.%s is not in the API list of %s", importPath, f, page)
		}
	}
}

func TestAPILists(t *testing.T) {
	check(t, "docs/go.md", "Go (`bloom`)", "bloom", "github.com/edgebloom/edgebloom/bloom")
	check(t, "docs/redis.md", "Go (`redisfilter`", "redisfilter", "github.com/edgebloom/edgebloom/redisfilter")
}
