package conventions

import (
	"go/ast"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// nodePkgs reads the Makefile's NODE_PKGS, the packages that run a real
// node, as paths relative to the repository.
func nodePkgs(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NODE_PKGS\s*:=\s*(.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no NODE_PKGS")
	}
	var pkgs []string
	for _, p := range strings.Fields(string(m[1])) {
		pkgs = append(pkgs, strings.TrimPrefix(p, "./"))
	}
	return pkgs
}

// Every test of a node package says which tier of the node suites it is
// in, and why, before it does anything (docs/development.md, "Two tiers"):
// its first statement is framework.InTier. Its second says whether it
// shares the installation with the other tests or breaks it and runs alone
// (docs/development.md, "Tests that share the installation"):
// framework.Shares or framework.Alone.
func TestNodeTestsDeclareTheirTierAndSharingFirst(t *testing.T) {
	_, files := sources(t)
	pkgs := nodePkgs(t)
	found := 0
	for _, src := range files {
		if !strings.HasSuffix(src.path, "_test.go") || !slices.Contains(pkgs, path.Dir(src.path)) {
			continue
		}
		for _, decl := range src.file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isTestFunc(fn) {
				continue
			}
			found++
			if !callsFramework(fn, 0, "InTier") {
				t.Errorf("%s: %s does not start with framework.InTier(t, tier, why)", src.path, fn.Name.Name)
			}
			if !callsFramework(fn, 1, "Shares", "Alone") {
				t.Errorf("%s: %s does not follow its tier with framework.Shares(t) or framework.Alone(t, why)",
					src.path, fn.Name.Name)
			}
		}
	}
	if found < 30 {
		t.Fatalf("found %d tests in the node packages %v, want all of them", found, pkgs)
	}
}

// isTestFunc reports whether fn is a top-level test: TestXxx(t *testing.T).
func isTestFunc(fn *ast.FuncDecl) bool {
	if !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
		return false
	}
	params := fn.Type.Params.List
	if len(params) != 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// callsFramework reports whether statement i of fn's body calls one of the
// functions names of package framework.
func callsFramework(fn *ast.FuncDecl, i int, names ...string) bool {
	if fn.Body == nil || len(fn.Body.List) <= i {
		return false
	}
	stmt, ok := fn.Body.List[i].(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := stmt.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !slices.Contains(names, sel.Sel.Name) {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "framework"
}
