package bloom_test

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEGoSnippets keeps the README's Go code compiling: every
// paragraph of every Go block in README.md and docs/*.md (blocks of
// signatures and the generated docs/format.md aside)
// must stand, token for token with comments and layout aside, in the body of
// an Example function of an example_test.go in this repository, which go
// test compiles and runs. An import line must be imported by such a file.
func TestREADMEGoSnippets(t *testing.T) {
	examples := readExamples(t, "..")
	if len(examples) == 0 {
		t.Fatal("no Example functions found")
	}
	for _, doc := range readDocs(t) {
		checked := 0
		for _, block := range goBlocks(doc.text) {
			if signaturesOnly(block.text) {
				continue
			}
			text, grouped := splitImportBlock(block.text)
			for _, imp := range grouped {
				if !anyImports(examples, imp) {
					t.Errorf("%s:%d: no example_test.go imports %q", doc.name, block.line, imp)
				}
			}
			for _, para := range strings.Split(text, "\n\n") {
				code, imports := splitImports(para)
				for _, imp := range imports {
					if !anyImports(examples, imp) {
						t.Errorf("%s:%d: no example_test.go imports %q", doc.name, block.line, imp)
					}
				}
				toks := tokens(code)
				if len(toks) == 0 {
					continue
				}
				checked++
				if !anyContains(examples, toks) {
					t.Errorf("%s:%d: no Example function contains this code; put it in one, in an example_test.go "+
						"(without an // Output: comment, go test compiles it and does not run it):\n%s", doc.name, block.line, code)
				}
			}
		}
		if checked == 0 && doc.name == "README.md" {
			t.Fatal("README.md has no Go code to check")
		}
	}
}

type docFile struct {
	name string // relative to the repository's root
	text string
}

// readDocs reads README.md and the pages of docs/, where the README's
// quick starts lead, but docs/format.md: TestFormatDoc writes its Go from
// the code and checks it.
func readDocs(t *testing.T) []docFile {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var docs []docFile
	for _, p := range append([]string{"../README.md"}, pages...) {
		if p == "../docs/format.md" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, docFile{strings.TrimPrefix(filepath.ToSlash(p), "../"), string(b)})
	}
	if len(docs) < 2 {
		t.Fatal("no pages in docs/")
	}
	return docs
}

type goBlock struct {
	line int // of the opening fence
	text string
}

var fence = regexp.MustCompile("(?ms)^```go\n(.*?)^```")

func goBlocks(md string) []goBlock {
	var blocks []goBlock
	for _, m := range fence.FindAllStringSubmatchIndex(md, -1) {
		blocks = append(blocks, goBlock{
			line: strings.Count(md[:m[0]], "\n") + 1,
			text: strings.TrimSpace(md[m[2]:m[3]]),
		})
	}
	return blocks
}

// signaturesOnly reports whether every line of a block is a func
// signature or a comment: an API list, not code.
func signaturesOnly(block string) bool {
	for _, line := range strings.Split(block, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "func ") && !strings.HasPrefix(line, "//") {
			return false
		}
	}
	return true
}

var importLine = regexp.MustCompile(`^import\s+("[^"]+")`)

// splitImportBlock takes a block's import declaration in parentheses
// (blank lines and aliases allowed) out of it, and returns the rest and
// the paths it imports.
func splitImportBlock(block string) (rest string, imports []string) {
	start := strings.Index(block, "import (\n")
	if start < 0 || (start > 0 && block[start-1] != '\n') {
		return block, nil
	}
	end := strings.Index(block[start:], "\n)")
	if end < 0 {
		return block, nil
	}
	for _, line := range strings.Split(block[start+len("import (\n"):start+end], "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if path, err := strconv.Unquote(f[len(f)-1]); err == nil {
				imports = append(imports, path)
			}
		}
	}
	return block[:start] + block[start+end+len("\n)"):], imports
}

func splitImports(para string) (code string, imports []string) {
	var rest []string
	for _, line := range strings.Split(para, "\n") {
		if m := importLine.FindStringSubmatch(line); m != nil {
			path, _ := strconv.Unquote(m[1])
			imports = append(imports, path)
			continue
		}
		rest = append(rest, line)
	}
	return strings.TrimSpace(strings.Join(rest, "\n")), imports
}

type tok struct {
	tok token.Token
	lit string
}

// tokens scans Go source into tokens without comments. Inserted and
// written semicolons compare equal.
func tokens(src string) []tok {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	s.Init(file, []byte(src), nil, 0)
	var toks []tok
	for {
		_, t, lit := s.Scan()
		if t == token.EOF {
			return toks
		}
		if t == token.SEMICOLON {
			lit = ""
		}
		toks = append(toks, tok{t, lit})
	}
}

type exampleFile struct {
	imports []string
	bodies  [][]tok // of its Example functions
}

// readExamples parses every example*_test.go below root.
func readExamples(t *testing.T, root string) []exampleFile {
	t.Helper()
	var files []exampleFile
	walkGo(t, root, func(path string, src []byte) {
		name := filepath.Base(path)
		if !strings.HasSuffix(name, "_test.go") || !strings.HasPrefix(name, "example") {
			return
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var ef exampleFile
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			ef.imports = append(ef.imports, p)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
			ef.bodies = append(ef.bodies, tokens(string(body)))
		}
		files = append(files, ef)
	})
	return files
}

// walkGo calls fn with every .go file below root, but those under
// node_modules, testdata and dot directories.
func walkGo(t *testing.T, root string, fn func(path string, src []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func anyImports(files []exampleFile, path string) bool {
	for _, f := range files {
		for _, p := range f.imports {
			if p == path {
				return true
			}
		}
	}
	return false
}

func anyContains(files []exampleFile, want []tok) bool {
	for _, f := range files {
		for _, body := range f.bodies {
			if containsRun(body, want) {
				return true
			}
		}
	}
	return false
}

// containsRun reports whether want stands in have as a contiguous run.
func containsRun(have, want []tok) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		match := true
		for j := range want {
			if have[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
