package docs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/runbook"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// checkIdentity is the read-only ServiceAccount of the check Job
// (deploy/syncer/check.yaml): a command that confirms an alert needs no
// more rights than it has, so whoever is paged can run it with the least
// access an operator has.
const checkIdentity = "system:serviceaccount:kyma-system:kim-snatch-check"

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
	root := tools.MustRepoRoot(t)
	for _, alert := range slices.Sorted(maps.Keys(alerts)) {
		t.Run(alert, func(t *testing.T) {
			d, section, err := alertSection(t, alerts[alert])
			if err != nil {
				t.Fatal(err)
			}
			rb, err := runbook.Parse(section)
			if err != nil {
				t.Fatalf("%s, section %s: %v", d.path, alert, err)
			}
			for _, line := range rb.Confirm.Commands {
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
					_, err := s.run(root, append(args, "--as="+checkIdentity)...)
					if err != nil && (strings.Contains(err.Error(), "Forbidden") || !strings.Contains(err.Error(), "NotFound") && !strings.Contains(err.Error(), "not found")) {
						t.Errorf("%s, section %s: %q as %s: %v", d.path, alert, line, checkIdentity, err)
					}
				default:
					t.Errorf("%s, section %s: %q confirms with kubectl %s; only get and kim-snatch check need no more than the check identity's read rights", d.path, alert, line, verb(args))
				}
			}
		})
	}
}
