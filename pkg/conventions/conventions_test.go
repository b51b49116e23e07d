package conventions

import (
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

const (
	maxFunctionLines   = 60
	maxPackageDocLines = 15
	maxFileLines       = 600
)

// A function reads as a straight sequence of named steps when it fits on a
// screen. Outside production code a table of cases may be long, as long
// as the code that runs it is not: its lines do not count, while each
// function literal in it is a function of its own.
func TestFunctionsAreShort(t *testing.T) {
	fset, files := sources(t)
	for _, src := range files {
		eachFunction(src.file, func(n ast.Node, name string) {
			l := lines(fset, n)
			if !src.production {
				l -= tableLines(fset, n)
			}
			if l > maxFunctionLines {
				t.Errorf("%s:%d: %s has %d lines, more than %d: split it into named steps",
					src.path, fset.Position(n.Pos()).Line, name, l, maxFunctionLines)
			}
		})
	}
}

// eachFunction calls fn with every function declaration and function
// literal of file, and its name ("a function literal" for a literal).
func eachFunction(file *ast.File, fn func(n ast.Node, name string)) {
	ast.Inspect(file, func(n ast.Node) bool {
		switch f := n.(type) {
		case *ast.FuncDecl:
			fn(n, f.Name.Name)
		case *ast.FuncLit:
			fn(n, "a function literal")
		}
		return true
	})
}

// tableLines counts the lines of fn's tables of cases: slice, array or map
// literals whose elements are all composite literals.
func tableLines(fset *token.FileSet, fn ast.Node) int {
	n := 0
	ast.Inspect(fn, func(node ast.Node) bool {
		if lit, ok := node.(*ast.CompositeLit); ok && isTable(lit) {
			n += lines(fset, lit)
			return false
		}
		return true
	})
	return n
}

func isTable(lit *ast.CompositeLit) bool {
	switch lit.Type.(type) {
	case *ast.ArrayType, *ast.MapType:
	default:
		return false
	}
	if len(lit.Elts) < 2 {
		return false
	}
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			e = kv.Value
		}
		if _, ok := e.(*ast.CompositeLit); !ok {
			return false
		}
	}
	return true
}

// A file holds one concern; past this many lines it holds several.
func TestFilesAreShort(t *testing.T) {
	fset, files := sources(t)
	for _, src := range files {
		if l := fset.File(src.file.Pos()).LineCount(); l > maxFileLines {
			t.Errorf("%s has %d lines, more than %d: split it along what it proves or does", src.path, l, maxFileLines)
		}
	}
}

// A package doc says what the package is for and what it promises; the
// reasoning behind it belongs in docs/.
func TestPackageDocsAreShort(t *testing.T) {
	fset, files := sources(t)
	for _, src := range files {
		if doc := src.file.Doc; doc != nil && lines(fset, doc) > maxPackageDocLines {
			t.Errorf("%s: the package doc has %d lines, more than %d: move the reasoning to docs/",
				src.path, lines(fset, doc), maxPackageDocLines)
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
	fset, files := sources(t)
	for _, src := range files {
		for _, cg := range src.file.Comments {
			for _, c := range cg.List {
				if m := measurement.FindString(c.Text); m != "" {
					t.Errorf("%s:%d: the comment holds the figure %q: move it to docs/benchmarks.md and name the section",
						src.path, fset.Position(c.Pos()).Line, m)
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
	fset, files := sources(t)
	checked := 0
	for _, src := range production(files) {
		ast.Inspect(src.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, k := range keyArgs(call) {
				checked++
				if lit, ok := k.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					key, _ := strconv.Unquote(lit.Value)
					t.Errorf("%s:%d: the log key %q is a literal: use the constant of pkg/logkeys, or name one",
						src.path, fset.Position(lit.Pos()).Line, key)
				}
			}
			return true
		})
	}
	if checked < 20 {
		t.Errorf("checked %d log keys, want every key of every log call", checked)
	}
}
