package conventions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A source is one parsed Go file, by its path from the repository root.
type source struct {
	path string
	file *ast.File
	// production is true for the code that ships: non-test files under
	// pkg/ and cmd/ outside the test helper packages, whose names end in
	// "test" (pkg/certtest, pkg/syncer/syncertest, pkg/check/checktest).
	production bool
}

// roots are the folders that hold the repository's Go code, hack/tools'
// modules included.
var roots = []string{"pkg", "cmd", "test", "hack"}

// sources parses every Go file under roots.
func sources(t *testing.T) (*token.FileSet, []source) {
	t.Helper()
	fset := token.NewFileSet()
	var out []source
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join("..", "..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, filepath.Join("..", "..")+string(filepath.Separator)))
			prod := (root == "pkg" || root == "cmd") && !strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(f.Name.Name, "test")
			out = append(out, source{path: rel, file: f, production: prod})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if prod := countProduction(out); prod < 40 || len(out)-prod < 200 {
		t.Fatalf("found %d production and %d other Go files, want all of them", prod, len(out)-prod)
	}
	return fset, out
}

func countProduction(files []source) int {
	n := 0
	for _, f := range files {
		if f.production {
			n++
		}
	}
	return n
}

func production(files []source) []source {
	var out []source
	for _, f := range files {
		if f.production {
			out = append(out, f)
		}
	}
	return out
}

func lines(fset *token.FileSet, n ast.Node) int {
	return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
}
