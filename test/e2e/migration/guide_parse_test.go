package migration

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The parser finds the steps and their sh blocks, skips blocks of other
// languages, and refuses a guide that would run nothing.
func TestGuideReaderTakesShStepsAndRefusesAGuideThatRunsNothing(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: the guide's reader")
	framework.Shares(t)
	dir := t.TempDir()
	guide := filepath.Join(dir, "guide.md")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(guide, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# G\n\n## Steps\n\n1. **One.** Text.\n\n   ```sh\n   echo one\n   echo two\n   ```\n\n   ```text\n   not run\n   ```\n\n2. **Two.** No commands.\n\n3. **Three.**\n\n   ```sh\n   a |\n     b\n   ```\n\n## Other\n\n1. **Elsewhere.**\n\n   ```sh\n   echo no\n   ```\n")
	steps, err := readGuide(guide, "Steps")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, s.String()+": "+strings.ReplaceAll(s.script, "\n", ";"))
	}
	want := []string{"Steps 1 (One): echo one;echo two;", "Steps 2 (Two): ", "Steps 3 (Three): a |;  b;"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("steps\n%q\nwant\n%q", got, want)
	}
	for name, text := range map[string]string{
		"missing section": "## Steps\n\n1. **One.**\n\n   ```sh\n   x\n   ```\n",
		"no commands":     "## Back\n\n1. **One.**\n\n   ```text\n   x\n   ```\n",
		"out of order":    "## Back\n\n1. **One.**\n\n   ```sh\n   x\n   ```\n\n3. **Three.**\n",
		"outside a step":  "## Back\n\n```sh\nx\n```\n",
	} {
		write(text)
		if _, err := readGuide(guide, "Back"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
