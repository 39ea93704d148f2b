package main

import (
	"bytes"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerated fails when a generated file (js/abi.js, worker/shard/abi.js) is
// not what internal/abi generates: the JavaScript side of the boundary would
// no longer match the Go side's.
func TestGenerated(t *testing.T) {
	files, err := generate("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(outputs) {
		t.Fatalf("%d files generated; want %d", len(files), len(outputs))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./internal/abi and commit the result", path)
		}
	}
}

// TestEverySource fails when a Go file of package abi is in no generated
// file: its constants would reach only the Go side.
func TestEverySource(t *testing.T) {
	listed := map[string]bool{}
	for _, o := range outputs {
		for _, src := range o.sources {
			listed[src] = true
		}
	}
	srcs, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range srcs {
		if name := filepath.Base(p); !strings.HasSuffix(name, "_test.go") && !listed[name] {
			t.Errorf("internal/abi/%s is in no generated file (outputs in gen/main.go)", name)
		}
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

func TestJSValue(t *testing.T) {
	for _, c := range []struct {
		v    constant.Value
		want string
	}{
		{constant.MakeInt64(-12), "-12"},
		{constant.MakeInt64(1 << 53), "9007199254740992"},
		{constant.MakeInt64(1<<53 + 1), "0x20000000000001n"},
		{constant.MakeUint64(0x9e3779b97f4a7c15), "0x9e3779b97f4a7c15n"},
		{constant.MakeString("EBSC"), "'EBSC'"},
	} {
		if got, err := jsValue(c.v); err != nil || got != c.want {
			t.Errorf("jsValue(%v): got %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	for _, bad := range []constant.Value{constant.MakeString("it's"), constant.MakeFloat64(0.5)} {
		if got, err := jsValue(bad); err == nil {
			t.Errorf("jsValue(%v): got %q, no error", bad, got)
		}
	}
}

// TestWriteFunc checks the translation of a sizing rule to JavaScript:
// parentheses where the order of operations needs them, constants folded as
// Go folds them, and a refusal of what it cannot translate faithfully.
func TestWriteFunc(t *testing.T) {
	const src = `package abi

import "math"

func F(a, b, c float64) float64 { return a - (b - c) + a*b/c - math.Floor(-a) / (math.Ln2 * math.Ln2) }
func G(a float64) float64 { return math.Round(a * (2 - 3)) }
func H(a float64) float64 { return math.Sin(a) }
func I(a int) float64 { return float64(a) }
func J(a float64) float64 { a++; return a }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sizing.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("abi", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"F": "return a - (b - c) + (a * b) / c - Math.floor(-a) / 0.48045301391820144;",
		"G": "return round(a * (-1));",
		"H": "error",
		"I": "error",
		"J": "error",
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		var b bytes.Buffer
		err := writeFunc(&b, fset, info, fn)
		switch w := want[fn.Name.Name]; {
		case w == "error" && err == nil:
			t.Errorf("%s: translated to %q; want an error", fn.Name.Name, b.String())
		case w != "error" && err != nil:
			t.Errorf("%s: %v", fn.Name.Name, err)
		case w != "error" && !strings.Contains(b.String(), w):
			t.Errorf("%s: got\n%s\nwant it to hold %q", fn.Name.Name, b.String(), w)
		}
	}
}
