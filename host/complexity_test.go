package host

import (
	"go/ast"
	"go/parser"
	"go/token"
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

// TestNoFunctionAboveComplexity: no function of the package outside its
// tests is above maxComplexity.
func TestNoFunctionAboveComplexity(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if c := cyclomatic(fn); c > maxComplexity {
				t.Errorf("%s: %s has cyclomatic complexity %d, over %d", fset.Position(fn.Pos()), fn.Name.Name, c, maxComplexity)
			}
		}
	}
}
