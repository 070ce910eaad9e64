package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryErrorCodeHasAStatus parses package core for its error code constants (E…) and
// checks that each maps to an HTTP status: a code without one would be answered as a 500.
func TestEveryErrorCodeHasAStatus(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../core/*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			for _, decl := range f.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					if vs.Type != nil {
						continue // typed constants (core.EventType) are not error codes
					}
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "E") || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						code, _ := strconv.Unquote(lit.Value)
						found++
						if _, ok := problemKinds[code]; !ok {
							t.Errorf("core.%s (%q) has no entry in problemKinds", name.Name, code)
						}
					}
				}
			}
		}
	}
	if found < 20 {
		t.Errorf("found only %d error codes in package core", found)
	}
}
