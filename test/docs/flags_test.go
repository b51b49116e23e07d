package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
)

func TestMain(m *testing.M) {
	code := m.Run()
	process.RemoveBuilt()
	os.Exit(code)
}

var helpFlag = regexp.MustCompile(`(?m)^  (-{1,2}[a-z0-9][a-z0-9-]*)\b`)

// flagsOf runs the binary with args and --help and returns its flags, each
// with two dashes except single-letter ones, and the output.
func flagsOf(t testing.TB, name string, args ...string) (map[string]bool, string) {
	t.Helper()
	// --help exits non-zero with the flag package; the output is what counts.
	r, _ := process.Command{}.Run(t.Context(), process.Binary(t, name), append(args, "--help")...)
	out := r.Stdout + r.Stderr
	flags := map[string]bool{}
	for _, m := range helpFlag.FindAllStringSubmatch(out, -1) {
		flags[canonicalFlag(m[1])] = true
	}
	return flags, out
}

// canonicalFlag writes a flag as the documents do: --name, or -o for a
// single letter.
func canonicalFlag(f string) string {
	name := strings.TrimLeft(f, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// The health command's flags, as its contract names them.
var checkContractFlags = setOf(
	"--kubeconfig", "--context", "--cluster", "--user", "--namespace", "--secret-namespace", "--secret-name", "--ca-key", "--webhook-configuration",
	"--webhook-service", "--leader-election-namespace", "--leader-election-id", "--webhook-selector", "--min-ready-webhooks",
	"--min-ca-validity", "--target-namespace", "--pool-label-key", "--worker-pool", "--admission-namespace", "-o", "-v", "--timeout", "--fail-on",
)

// checkFlags returns the flags of `cabundle-syncer check`, or nil when the
// binary has no such command yet.
func checkFlags(t testing.TB) map[string]bool {
	t.Helper()
	flags, out := flagsOf(t, "cabundle-syncer", "check")
	if strings.Contains(out, `unknown command "check"`) {
		return nil
	}
	return flags
}

func documentedFlags(t *testing.T, heading string) map[string]bool {
	t.Helper()
	return setOf(tableColumn(readDoc(t, "docs/operations.md").section(t, heading), 0)...)
}

// The flag tables of operations.md list exactly the flags of each binary.
func TestFlagTablesMatchTheBinaries(t *testing.T) {
	t.Run("snatch_webhook_table_matches_the_binary", func(t *testing.T) {
		actual, _ := flagsOf(t, "snatch-webhook")
		compareSets(t, "snatch-webhook flag", documentedFlags(t, "snatch-webhook flags"), actual)
	})
	t.Run("cabundle_syncer_table_matches_the_binary", func(t *testing.T) {
		actual, _ := flagsOf(t, "cabundle-syncer")
		compareSets(t, "cabundle-syncer flag", documentedFlags(t, "cabundle-syncer flags"), actual)
	})
	t.Run("check_table_matches_the_contract", func(t *testing.T) {
		compareSets(t, "cabundle-syncer check flag (contract)", documentedFlags(t, "Check flags"), checkContractFlags)
	})
	t.Run("check_binary_has_every_documented_flag", func(t *testing.T) {
		actual := checkFlags(t)
		if actual == nil {
			t.Skip("cabundle-syncer has no check command yet: `cabundle-syncer check --help` answers unknown command; the documented flags are held to the contract only")
		}
		for f := range documentedFlags(t, "Check flags") {
			if !actual[f] {
				t.Errorf("cabundle-syncer check flag %q is documented but the binary does not have it", f)
			}
		}
	})
}

var flagToken = regexp.MustCompile(`(?:^|[\s\x60(=])(--[a-z0-9][a-z0-9-]*)`)

// Every flag named anywhere in the documents, outside kubectl and other
// tools' command lines, is a flag of one of the binaries.
func TestEveryDocumentedFlagExists(t *testing.T) {
	known := map[string]bool{}
	for _, set := range []map[string]bool{checkContractFlags, must(flagsOf(t, "snatch-webhook")), must(flagsOf(t, "cabundle-syncer")), must(flagsOf(t, "snatch-webhook", "mutate"))} {
		for f := range set {
			known[f] = true
		}
	}
	if cf := checkFlags(t); cf != nil {
		for f := range cf {
			known[f] = true
		}
	}
	for _, d := range readDocs(t) {
		var texts []string
		texts = append(texts, inlineSpans(d.text)...)
		texts = append(texts, codeBlocks(d.text)...)
		// Prose outside code spans.
		texts = append(texts, inlineCode.ReplaceAllString(prose(d.text), " "))
		for _, s := range texts {
			s = ourPart(s)
			if isOtherTool(s) {
				continue
			}
			for _, m := range flagToken.FindAllStringSubmatch(s, -1) {
				f := strings.SplitN(m[1], "=", 2)[0]
				if !known[f] && !kubectlFlags[f] && !kubeStateMetricsFlags[f] && (d.path != "docs/migration.md" || !formerFlags[f]) {
					t.Errorf("%s names flag %s (in %q), which no binary has", d.path, f, strings.TrimSpace(s))
				}
			}
		}
	}
}

// isOtherTool reports whether a code line or span is a command of another
// tool, whose flags are checked elsewhere (kubectl, see kubectl_test.go) or
// not at all. The part of a `kubectl exec` after "--" is ours.
func isOtherTool(s string) bool {
	for _, tool := range []string{"kubectl", "kustomize", "openssl", "grep", "base64", "curl", "hack/"} {
		if strings.Contains(s, tool) {
			return true
		}
	}
	return false
}

// ourPart returns the part of a kubectl exec line that runs one of the
// binaries, or s itself.
func ourPart(s string) string {
	if _, after, ok := strings.Cut(s, " -- "); ok && strings.Contains(s, "kubectl") {
		return after
	}
	return s
}

// kubectlFlags are the flags of kubectl apply that the documents name on
// their own, to say what an apply does.
var kubectlFlags = setOf("--server-side", "--force-conflicts")

// kubeStateMetricsFlags are the flags of kube-state-metrics that the
// documents name as what the placement rules require of it.
var kubeStateMetricsFlags = setOf("--metric-labels-allowlist", "--metric-opt-in-list")

// formerFlags are flags of the single-binary kim-snatch, named only in
// docs/migration.md to map them to today's.
var formerFlags = setOf("--kyma-worker-pool-name", "--webhook-cfg-name")

func must(flags map[string]bool, _ string) map[string]bool { return flags }
