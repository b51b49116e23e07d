package runbook

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTakesConfirmAndFixOrSaysWhatIsMissing(t *testing.T) {
	const (
		confirm = "Confirm:\n\n```sh\nkubectl get nodes\n```\n"
		fix     = "Fix:\n\n```sh\nkubectl -n kyma-system rollout restart deploy/snatch-webhook\n```\n"
		restart = "kubectl -n kyma-system rollout restart deploy/snatch-webhook"
	)
	for _, tt := range []struct {
		name, section string
		confirm, fix  []string
		err           string
	}{
		{name: "both_blocks_give_their_commands", section: "Critical.\n\n" + confirm + "\n" + fix,
			confirm: []string{"kubectl get nodes"}, fix: []string{restart}},
		{name: "continued_lines_join_and_comments_drop", section: "Confirm:\n```sh\n# the pools\nkubectl get nodes \\\n  -L worker.gardener.cloud/pool\n```\n" + fix,
			confirm: []string{"kubectl get nodes    -L worker.gardener.cloud/pool"}, fix: []string{restart}},
		{name: "no_confirm_is_named", section: "Critical.\n\n" + fix, err: `no line "Confirm:"`},
		{name: "no_fix_is_named", section: "Critical.\n\n" + confirm, err: `no line "Fix:"`},
		{name: "prose_alone_names_the_missing_confirm", section: "Do: run `kubectl get nodes`.\n", err: `no line "Confirm:"`},
		{name: "label_without_block_fails", section: "Confirm: run `kubectl get nodes`.\n\nConfirm:\n\nprose\n" + fix, err: `"Confirm:" is not followed by a` + " ```sh block"},
		{name: "block_other_than_sh_fails", section: "Confirm:\n\n```text\nkubectl get nodes\n```\n" + fix, err: "is not followed by a ```sh block"},
		{name: "block_of_comments_fails", section: "Confirm:\n\n```sh\n# nothing\n```\n" + fix, err: "holds no command"},
		{name: "unclosed_block_fails", section: fix + "Confirm:\n\n```sh\nkubectl get nodes\n", err: "is not closed"},
		{name: "label_twice_fails", section: confirm + confirm + fix, err: `"Confirm:" twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.section)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse: error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !slices.Equal(got.Confirm.Commands, tt.confirm) || !slices.Equal(got.Fix.Commands, tt.fix) {
				t.Errorf("Parse = %q, %q; want %q, %q", got.Confirm.Commands, got.Fix.Commands, tt.confirm, tt.fix)
			}
		})
	}
}

// A block's Script is its text as written, for a shell: a command whose
// quoted argument spans lines stays one command there.
func TestParseKeepsTheBlockAsWrittenForAShell(t *testing.T) {
	const script = "kubectl patch x --type=json -p='[\n  {\"op\": \"remove\", \"path\": \"/a\"}]'\n"
	rb, err := Parse("Confirm:\n\n```sh\nkubectl get x\n```\n\nFix:\n\n```sh\n" + script + "```\n")
	if err != nil {
		t.Fatal(err)
	}
	if rb.Fix.Script != script {
		t.Errorf("Fix.Script = %q, want %q", rb.Fix.Script, script)
	}
}

func TestSectionEndsAtTheNextHeadingOfItsLevelOutsideCode(t *testing.T) {
	const doc = "# Title\n\n## Alerts\n\n### A\n\nAbout A.\n\n```sh\n# a comment, not a heading\nkubectl get a\n```\n\n#### Detail of A\n\nmore\n\n### B\n\nAbout B.\n\n## After\n"
	for _, tt := range []struct{ heading, want, err string }{
		{heading: "A", want: "\nAbout A.\n\n```sh\n# a comment, not a heading\nkubectl get a\n```\n\n#### Detail of A\n\nmore\n"},
		{heading: "B", want: "\nAbout B.\n"},
		{heading: "After", want: ""},
		{heading: "C", err: `no heading "C"`},
	} {
		got, err := Section(doc, tt.heading)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Section(%q): error %v, want %q", tt.heading, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Section(%q) = %q, %v; want %q", tt.heading, got, err, tt.want)
		}
	}
}
