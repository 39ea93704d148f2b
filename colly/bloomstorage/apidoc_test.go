package bloomstorage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAPISection: docs/colly.md's API section names every exported
// function, method, type, variable and constant of the package, so that a
// reader needs no go doc to find one.
func TestAPISection(t *testing.T) {
	page, err := os.ReadFile("../../docs/colly.md")
	if err != nil {
		t.Fatal(err)
	}
	_, api, ok := strings.Cut(string(page), "\n## API\n")
	if !ok {
		t.Fatal("docs/colly.md has no API section")
	}
	api, _, _ = strings.Cut(api, "\n## ")
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					// A method of an unexported type (an http.RoundTripper
					// kept inside) is no part of the API.
					if d.Recv != nil && !ast.IsExported(receiverType(d.Recv.List[0].Type)) {
						continue
					}
					names = append(names, d.Name.Name)
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							names = append(names, s.Name.Name)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	checked := 0
	for _, name := range names {
		if !ast.IsExported(name) {
			continue
		}
		checked++
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(api) {
			t.Errorf("docs/colly.md's API section does not name %s", name)
		}
	}
	if checked < 20 {
		t.Fatalf("found %d exported names; the parse missed the package", checked)
	}
}

// receiverType is the name of the type of a method's receiver, T or *T.
func receiverType(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
