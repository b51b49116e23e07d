package conventions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	maxFunctionLines   = 60
	maxPackageDocLines = 15
)

// productionFiles parses every non-test Go file under pkg/ and cmd/ outside
// the test helper packages, whose names end in "test" (pkg/certtest,
// pkg/syncer/syncertest, pkg/check/checktest).
func productionFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, root := range []string{"../../pkg", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if !strings.HasSuffix(f.Name.Name, "test") {
				files[strings.TrimPrefix(path, "../../")] = f
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 40 {
		t.Fatalf("found %d production files under pkg/ and cmd/, want all of them", len(files))
	}
	return fset, files
}

func lines(fset *token.FileSet, n ast.Node) int {
	return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
}

// A function reads as a straight sequence of named steps when it fits on a
// screen.
func TestFunctionsAreShort(t *testing.T) {
	fset, files := productionFiles(t)
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				name = fn.Name.Name
			case *ast.FuncLit:
			default:
				return true
			}
			if l := lines(fset, n); l > maxFunctionLines {
				t.Errorf("%s:%d: %s has %d lines, more than %d: split it into named steps",
					path, fset.Position(n.Pos()).Line, name, l, maxFunctionLines)
			}
			return true
		})
	}
}

// A package doc says what the package is for and what it promises; the
// reasoning behind it belongs in docs/architecture.md.
func TestPackageDocsAreShort(t *testing.T) {
	fset, files := productionFiles(t)
	for path, f := range files {
		if f.Doc != nil && lines(fset, f.Doc) > maxPackageDocLines {
			t.Errorf("%s: the package doc has %d lines, more than %d: move the reasoning to docs/architecture.md",
				path, lines(fset, f.Doc), maxPackageDocLines)
		}
	}
}

// measurement matches what a comment must not hold, as it rots: a date, a
// duration in µs, ms or ns, or an approximate size or time ("about 1.5
// MiB"). Limits and sizes that define behaviour ("3 MiB", "30 s") are
// facts of the code, not measurements, and may stay.
var measurement = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|\d[\d.,]*\s?(µs|us|ms|ns)\b|(?i:about|roughly|~)\s*\d[\d.,]*\s?(s|ms|KB|KiB|MB|MiB|GB|GiB)\b|\d+ allocations`)

// Figures live in docs/benchmarks.md, where make bench keeps them true; a
// comment names the section instead.
func TestCommentsHoldNoMeasurements(t *testing.T) {
	fset, files := productionFiles(t)
	for path, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if m := measurement.FindString(c.Text); m != "" {
					t.Errorf("%s:%d: the comment holds the figure %q: move it to docs/benchmarks.md and name the section",
						path, fset.Position(c.Pos()).Line, m)
				}
			}
		}
	}
}

// keyArgs returns the arguments of a logr call that are keys: Info(msg,
// k, v, ...), Error(err, msg, k, v, ...) and WithValues(k, v, ...).
func keyArgs(call *ast.CallExpr) []ast.Expr {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	first := map[string]int{"Info": 1, "Error": 2, "WithValues": 0}[sel.Sel.Name]
	if sel.Sel.Name != "WithValues" && first == 0 || len(call.Args) <= first {
		return nil
	}
	var keys []ast.Expr
	for i := first; i < len(call.Args); i += 2 {
		keys = append(keys, call.Args[i])
	}
	return keys
}

// Operators grep and alert on log keys, so each is a named constant:
// pkg/logkeys for those of docs/operations.md ("Keys"), a constant beside
// the one line that uses it for the others.
func TestLogKeysAreConstants(t *testing.T) {
	fset, files := productionFiles(t)
	checked := 0
	for path, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, k := range keyArgs(call) {
				checked++
				if lit, ok := k.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					key, _ := strconv.Unquote(lit.Value)
					t.Errorf("%s:%d: the log key %q is a literal: use the constant of pkg/logkeys, or name one",
						path, fset.Position(lit.Pos()).Line, key)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Errorf("checked %d log keys, want every key of every log call", checked)
	}
}
