package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxComplexity is the most cyclomatic complexity a function of this
// package may have: past it, a function holds more than one decision
// and is split into one function per decision.
const maxComplexity = 20

// cyclomatic is a function's cyclomatic complexity as gocyclo counts it:
// 1, plus one for each if, for, range, non-default case and select
// clause, and each && and ||.
func cyclomatic(fn *ast.FuncDecl) int {
	n := 1
	ast.Inspect(fn, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// TestNoFunctionAboveComplexity: no function of host or a package under
// it, outside their tests, is above maxComplexity.
func TestNoFunctionAboveComplexity(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if c := cyclomatic(fn); c > maxComplexity {
				t.Errorf("%s: %s has cyclomatic complexity %d, over %d", fset.Position(fn.Pos()), fn.Name.Name, c, maxComplexity)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
