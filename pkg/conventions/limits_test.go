package conventions

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The tighter limits of the binaries and of check, whose code an operator
// reads beside the report it printed: a function is a few named steps, and
// a line fits a side-by-side review. A line's length is its characters, a
// tab counted as one, as gofmt indents. Tests are exempt, as from the
// limits of TestFunctionsAreShort: their tables of cases are long by nature.
const (
	maxStrictFunctionLines = 40
	maxStrictLineChars     = 120
)

// strictDirs hold the production code that keeps the tighter limits.
var strictDirs = []string{"cmd/cabundle-syncer", "cmd/snatch-webhook", "pkg/check"}

func TestStrictPackagesKeepShortFunctionsAndLines(t *testing.T) {
	fset, files := sources(t)
	checked := 0
	for _, src := range production(files) {
		if !slices.Contains(strictDirs, path.Dir(src.path)) {
			continue
		}
		checked++
		text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(src.path)))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range strictViolations(fset, src.file, text) {
			t.Errorf("%s:%s", src.path, v)
		}
	}
	if checked < 15 {
		t.Fatalf("checked %d files in %v, want every production file there", checked, strictDirs)
	}
}

// strictViolations returns, as "line: what", every function of file longer
// than maxStrictFunctionLines and every line of text, its source, longer
// than maxStrictLineChars.
func strictViolations(fset *token.FileSet, file *ast.File, text []byte) []string {
	var out []string
	eachFunction(file, func(n ast.Node, name string) {
		if l := lines(fset, n); l > maxStrictFunctionLines {
			out = append(out, fmt.Sprintf("%d: %s has %d lines, more than %d: split it into named steps",
				fset.Position(n.Pos()).Line, name, l, maxStrictFunctionLines))
		}
	})
	for i, line := range strings.Split(string(text), "\n") {
		if n := utf8.RuneCountInString(line); n > maxStrictLineChars {
			out = append(out, fmt.Sprintf("%d: the line has %d characters, more than %d: wrap it",
				i+1, n, maxStrictLineChars))
		}
	}
	return out
}

// The check itself, over a synthetic source: a function of 40 lines and a
// line of 120 characters pass, one more of either fails.
func TestStrictViolationsFindALongFunctionAndALongLine(t *testing.T) {
	body := func(lines int) string { // a function of lines lines in all
		return "func f() {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	line := func(chars int) string { // a comment line of chars characters
		return "// " + strings.Repeat("x", chars-3) + "\n"
	}
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{name: "at_the_limits_passes", src: body(40) + line(120)},
		{name: "function_of_41_lines_is_found", src: body(41), want: []string{"3: f has 41 lines, more than 40"}},
		{name: "line_of_121_characters_is_found", src: line(121), want: []string{"3: the line has 121 characters, more than 120"}},
		{name: "a_tab_is_one_character", src: "var s = `\t" + strings.Repeat("é", 109) + "`\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\n\n" + tt.src
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := strictViolations(fset, f, []byte(src))
			if len(got) != len(tt.want) {
				t.Fatalf("violations %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("violation %q, want %q", got[i], tt.want[i])
				}
			}
		})
	}
}
