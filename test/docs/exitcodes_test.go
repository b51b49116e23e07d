package docs

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/check"
)

// The exit codes of operations.md, the one page that lists them, are
// exactly check's, each with the gate verdict the code gives it; and the
// other pages name no code list of their own.
func TestExitCodesMatchTheCode(t *testing.T) {
	documented := map[int]string{}
	for l := range strings.SplitSeq(readDoc(t, "docs/operations.md").section(t, "Exit codes"), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		code, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil || len(cells) < 4 {
			continue
		}
		documented[code] = strings.TrimSpace(cells[3])
	}
	for _, e := range check.ExitCodes() {
		want := "fails"
		if e.PassesGate {
			want = "passes"
		}
		if got, ok := documented[e.Code]; !ok || got != want {
			t.Errorf("exit code %d (%s): documented gate %q, want %q", e.Code, e.Name, got, want)
		}
		delete(documented, e.Code)
	}
	for code := range documented {
		t.Errorf("docs/operations.md documents exit code %d, which check does not have", code)
	}
	for _, d := range readDocs(t) {
		if d.path != "docs/operations.md" && strings.Contains(d.text, "| Exit code |") {
			t.Errorf("%s has a table of exit codes of its own; link to docs/operations.md#exit-codes", d.path)
		}
	}
}
