package docs

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// checkIdentity is the read-only ServiceAccount of the check Job
// (deploy/syncer/check.yaml): a command that confirms an alert needs no
// more rights than it has, so whoever is paged can run it with the least
// access an operator has.
const checkIdentity = "system:serviceaccount:kyma-system:kim-snatch-check"

// The labels that open an alert section's two command blocks.
const (
	confirmLabel = "Confirm:"
	fixLabel     = "Fix:"
)

// runbook is what an alert's section gives the person paged: the command
// lines of the sh block after "Confirm:", and of the one after "Fix:".
type runbook struct {
	confirm, fix []string
}

// parseRunbook reads the Confirm and Fix blocks of an alert's section. Each
// label stands alone on its line, once, and is followed by a ```sh block
// with at least one command.
func parseRunbook(section string) (runbook, error) {
	var rb runbook
	var errs []error
	for _, label := range []string{confirmLabel, fixLabel} {
		cmds, err := labelledBlock(section, label)
		if err != nil {
			errs = append(errs, err)
		}
		if label == confirmLabel {
			rb.confirm = cmds
		} else {
			rb.fix = cmds
		}
	}
	return rb, errors.Join(errs...)
}

// labelledBlock returns the command lines of the sh block that follows the
// line label, continued lines joined; blank lines and comments are not
// commands.
func labelledBlock(section, label string) ([]string, error) {
	lines := strings.Split(section, "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != label {
			continue
		}
		if at >= 0 {
			return nil, fmt.Errorf("%q twice", label)
		}
		at = i
	}
	if at < 0 {
		return nil, fmt.Errorf("no line %q", label)
	}
	i := at + 1
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i >= len(lines) || strings.TrimSpace(lines[i]) != "```sh" {
		return nil, fmt.Errorf("%q is not followed by a ```sh block", label)
	}
	var block []string
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		block = append(block, lines[i])
	}
	if i >= len(lines) {
		return nil, fmt.Errorf("the block after %q is not closed", label)
	}
	var cmds []string
	for _, l := range joinContinued(block) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("the block after %q holds no command", label)
	}
	return cmds, nil
}

func TestParseRunbookTakesConfirmAndFixOrSaysWhatIsMissing(t *testing.T) {
	const (
		confirm = "Confirm:\n\n```sh\nkubectl get nodes\n```\n"
		fix     = "Fix:\n\n```sh\nkubectl -n kyma-system rollout restart deploy/snatch-webhook\n```\n"
	)
	for _, tt := range []struct {
		name, section string
		want          runbook
		err           string
	}{
		{name: "both_blocks", section: "Critical.\n\n" + confirm + "\n" + fix,
			want: runbook{confirm: []string{"kubectl get nodes"}, fix: []string{"kubectl -n kyma-system rollout restart deploy/snatch-webhook"}}},
		{name: "continued_lines_and_comments", section: "Confirm:\n```sh\n# the pools\nkubectl get nodes \\\n  -L worker.gardener.cloud/pool\n```\n" + fix,
			want: runbook{confirm: []string{"kubectl get nodes    -L worker.gardener.cloud/pool"}, fix: []string{"kubectl -n kyma-system rollout restart deploy/snatch-webhook"}}},
		{name: "no_confirm", section: "Critical.\n\n" + fix, err: `no line "Confirm:"`},
		{name: "no_fix", section: "Critical.\n\n" + confirm, err: `no line "Fix:"`},
		{name: "neither", section: "Do: run `kubectl get nodes`.\n", err: `no line "Confirm:"`},
		{name: "label_without_block", section: "Confirm: run `kubectl get nodes`.\n\nConfirm:\n\nprose\n" + fix, err: `"Confirm:" is not followed by a` + " ```sh block"},
		{name: "block_not_sh", section: "Confirm:\n\n```text\nkubectl get nodes\n```\n" + fix, err: "is not followed by a ```sh block"},
		{name: "empty_block", section: "Confirm:\n\n```sh\n# nothing\n```\n" + fix, err: "holds no command"},
		{name: "unclosed_block", section: fix + "Confirm:\n\n```sh\nkubectl get nodes\n", err: "is not closed"},
		{name: "label_twice", section: confirm + confirm + fix, err: `"Confirm:" twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRunbook(tt.section)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("parseRunbook: error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRunbook: %v", err)
			}
			if !slices.Equal(got.confirm, tt.want.confirm) || !slices.Equal(got.fix, tt.want.fix) {
				t.Errorf("parseRunbook = %q, want %q", got, tt.want)
			}
		})
	}
}

// alertSection returns the section that an alert's runbook_url names: the
// document and the heading whose anchor the URL ends in.
func alertSection(t *testing.T, url string) (doc, string, error) {
	t.Helper()
	rest, ok := strings.CutPrefix(url, runbookBase(t))
	file, anchor, _ := strings.Cut(rest, "#")
	if !ok || anchor == "" || !slices.Contains(documents, file) {
		return doc{}, "", fmt.Errorf("runbook_url %q names no section of %v", url, documents)
	}
	d := readDoc(t, file)
	for l := range strings.SplitSeq(prose(d.text), "\n") {
		h := strings.TrimLeft(l, "#")
		if len(h) < len(l) && strings.HasPrefix(h, " ") && slug(strings.TrimSpace(h)) == anchor {
			return d, d.section(t, strings.TrimSpace(h)), nil
		}
	}
	return doc{}, "", fmt.Errorf("runbook_url %q: %s has no heading with that anchor", url, file)
}

// Every alert's runbook, the section its runbook_url names, gives a
// command that confirms the alert and one that fixes it, each in the block
// after its label. Whoever is paged may hold no more than the check
// identity's read rights, so every confirming command is a `kubectl get`,
// which must succeed as that identity against deploy/default (a NotFound
// aside: the test's cluster runs no Pods and no cert-management), or
// `kubectl kim-snatch check`, which needs exactly those rights
// (test/manifests/check_rbac_test.go). The fixing commands are validated
// with every other documented command (TestDocumentedKubectlCommandsHoldAgainstAnAPIServer).
func TestRunbookCommandsConfirmAndFixEachAlert(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	alerts := alertRunbookURLs(t)
	if len(alerts) == 0 {
		t.Fatal("deploy/ defines no alerts")
	}
	s := startAPIServer(t)
	root := repoRoot(t)
	for _, alert := range slices.Sorted(maps.Keys(alerts)) {
		t.Run(alert, func(t *testing.T) {
			d, section, err := alertSection(t, alerts[alert])
			if err != nil {
				t.Fatal(err)
			}
			rb, err := parseRunbook(section)
			if err != nil {
				t.Fatalf("%s, section %s: %v", d.path, alert, err)
			}
			for _, line := range rb.confirm {
				cmd, _, _ := strings.Cut(line, " | ")
				words, err := shellWords(fillPlaceholders(cmd))
				if err != nil || len(words) < 2 || words[0] != "kubectl" {
					t.Errorf("%s, section %s: %q confirms with something other than kubectl (%v)", d.path, alert, line, err)
					continue
				}
				args := words[1:]
				switch verb(args) {
				case pluginName:
					if len(args) < 2 || args[1] != "check" {
						t.Errorf("%s, section %s: %q: the plugin's one command is check", d.path, alert, line)
					}
				case "get":
					stdout, stderr, err := s.run(root, append(args, "--as="+checkIdentity)...)
					if err != nil && (strings.Contains(stderr, "Forbidden") || !strings.Contains(stderr, "NotFound") && !strings.Contains(stderr, "not found")) {
						t.Errorf("%s, section %s: %q as %s: %v\n%s%s", d.path, alert, line, checkIdentity, err, stdout, stderr)
					}
				default:
					t.Errorf("%s, section %s: %q confirms with kubectl %s; only get and kim-snatch check need no more than the check identity's read rights", d.path, alert, line, verb(args))
				}
			}
		})
	}
}
