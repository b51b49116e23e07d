package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/runbook"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The documents under test, relative to the repository root.
var documents = []string{
	"docs/architecture.md",
	"docs/operations.md",
	"docs/troubleshooting.md",
	"docs/migration.md",
}

// doc is one markdown document.
type doc struct {
	path string // relative to the repository root
	text string
}

func readDocs(t testing.TB) []doc {
	t.Helper()
	root := tools.MustRepoRoot(t)
	var out []doc
	for _, p := range documents {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, doc{path: p, text: string(b)})
	}
	return out
}

func readDoc(t testing.TB, path string) doc {
	t.Helper()
	for _, d := range readDocs(t) {
		if d.path == path {
			return d
		}
	}
	t.Fatalf("%s is not one of the documents", path)
	return doc{}
}

// section returns the text under the heading with the given title, up to
// the next heading of the same or a higher level. A comment line of a
// fenced code block is no heading.
func (d doc) section(t testing.TB, title string) string {
	t.Helper()
	section, err := runbook.Section(d.text, title)
	if err != nil {
		t.Fatalf("%s: %v", d.path, err)
	}
	return section
}

var firstColumnCode = regexp.MustCompile("^\\|\\s*`([^`]+)`")

// tableColumn returns the code span at the start of each column-th cell
// of the table rows in text (column 0 is the first).
func tableColumn(text string, column int) []string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if column >= len(cells) {
			continue
		}
		if m := firstColumnCode.FindStringSubmatch("|" + strings.TrimSpace(cells[column])); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// codeBlocks returns the lines of the fenced code blocks in text.
func codeBlocks(text string) []string {
	var out []string
	in := false
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// prose returns text without its fenced code blocks.
func prose(text string) string {
	var b strings.Builder
	in := false
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// inlineSpans returns the inline code spans of the prose of text.
func inlineSpans(text string) []string {
	var out []string
	for _, m := range inlineCode.FindAllStringSubmatch(prose(text), -1) {
		out = append(out, m[1])
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compareSets reports what is only in documented and only in actual.
func compareSets(t *testing.T, what string, documented, actual map[string]bool) {
	t.Helper()
	for _, k := range sortedKeys(documented) {
		if !actual[k] {
			t.Errorf("%s %q is documented but does not exist", what, k)
		}
	}
	for _, k := range sortedKeys(actual) {
		if !documented[k] {
			t.Errorf("%s %q exists but is not documented", what, k)
		}
	}
}

func setOf(items ...string) map[string]bool {
	m := map[string]bool{}
	for _, i := range items {
		m[i] = true
	}
	return m
}
