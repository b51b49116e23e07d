package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/metricdefs"
	"github.com/kyma-project/kim-snatch/test/tools"
)

var metricName = regexp.MustCompile(`\b(?:snatch_webhook|cabundle_syncer)_[a-z0-9_]*[a-z0-9]`)

// registeredMetrics returns the names of every metric both binaries
// register.
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	families, err := metricdefs.Registered()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	return names
}

// Every metric the documents name is registered by the code, and
// operations.md documents every registered metric.
func TestMetricsAreDocumented(t *testing.T) {
	registered := registeredMetrics(t)
	for _, d := range readDocs(t) {
		for _, m := range metricName.FindAllString(d.text, -1) {
			base := m
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(m, suffix); ok && registered[b] {
					base = b
				}
			}
			if !registered[base] {
				t.Errorf("%s names metric %s, which the code does not register", d.path, m)
			}
		}
	}
	documented := setOf(metricName.FindAllString(readDoc(t, "docs/operations.md").section(t, "Metrics"), -1)...)
	for m := range registered {
		if !documented[m] {
			t.Errorf("metric %s is registered but not documented in the Metrics section of docs/operations.md", m)
		}
	}
}

var alertName = regexp.MustCompile(`\bKimSnatch[A-Za-z]+\b`)

// deployedAlerts returns the alert names of deploy/*/prometheusrule.yaml.
func deployedAlerts(t *testing.T) map[string]bool {
	t.Helper()
	alerts := map[string]bool{}
	for a := range alertRunbookURLs(t) {
		alerts[a] = true
	}
	return alerts
}

// componentAlerts returns the alert names of the optional components'
// rules, deploy/components/*/prometheusrule.yaml, such as the fleet alerts
// that a central Prometheus evaluates.
func componentAlerts(t *testing.T) map[string]bool {
	t.Helper()
	alerts := map[string]bool{}
	for a := range ruleFileAlerts(t, filepath.Join("deploy", "components", "*", "prometheusrule.yaml")) {
		alerts[a] = true
	}
	return alerts
}

// alertRunbookURLs returns the runbook_url annotation of each alert of
// deploy/*/prometheusrule.yaml, by alert name.
func alertRunbookURLs(t *testing.T) map[string]string {
	t.Helper()
	return ruleFileAlerts(t, filepath.Join("deploy", "*", "prometheusrule.yaml"))
}

// ruleFileAlerts returns the runbook_url annotation of each alert of the
// PrometheusRules that pattern, relative to the repository root, matches.
func ruleFileAlerts(t *testing.T, pattern string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tools.MustRepoRoot(t), pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s: %v", pattern, err)
	}
	alerts := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var pr struct {
			Spec struct {
				Groups []struct {
					Rules []struct {
						Alert       string            `json:"alert"`
						Annotations map[string]string `json:"annotations"`
					} `json:"rules"`
				} `json:"groups"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &pr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range pr.Spec.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					alerts[r.Alert] = r.Annotations["runbook_url"]
				}
			}
		}
	}
	return alerts
}

// operations.md has a section for every deployed alert and none for an
// alert that does not exist, under "Alerts" for the installation's and
// under "Fleet alerts" for the components'; no document names an alert
// that does not exist.
func TestAlertsAreDocumented(t *testing.T) {
	deployed, components := deployedAlerts(t), componentAlerts(t)
	ops := readDoc(t, "docs/operations.md")
	headings := func(section string) map[string]bool {
		hs := map[string]bool{}
		for l := range strings.SplitSeq(ops.section(t, section), "\n") {
			if h, ok := strings.CutPrefix(l, "### "); ok {
				hs[strings.TrimSpace(h)] = true
			}
		}
		return hs
	}
	compareSets(t, "alert", headings("Alerts"), deployed)
	compareSets(t, "fleet alert", headings("Fleet alerts"), components)
	for _, d := range readDocs(t) {
		for _, a := range alertName.FindAllString(d.text, -1) {
			if !deployed[a] && !components[a] {
				t.Errorf("%s names alert %s, which deploy/ does not define", d.path, a)
			}
		}
	}
}

// logKeyConstants parses pkg/logkeys and returns the values of its string
// constants.
func logKeyConstants(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	dir := filepath.Join(tools.MustRepoRoot(t), "pkg", "logkeys")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, err := strconv.Unquote(lit.Value)
						if err != nil {
							t.Fatal(err)
						}
						keys[s] = true
					}
				}
			}
		}
	}
	if len(keys) == 0 {
		t.Fatal("pkg/logkeys declares no keys")
	}
	return keys
}

// The key table of operations.md lists exactly the constants of
// pkg/logkeys, and the message table exactly the messages the code logs.
func TestLogKeysAndMessagesAreDocumented(t *testing.T) {
	ops := readDoc(t, "docs/operations.md")
	compareSets(t, "log key", setOf(tableColumn(ops.section(t, "Keys"), 0)...), logKeyConstants(t))
	messages := setOf(
		admission.MsgDecision,
		serving.MsgCertificateLoaded, serving.MsgCertificateLoadFailed,
		syncer.MsgWritten, syncer.MsgStateRecorded, syncer.MsgUnchanged, syncer.MsgRefused, syncer.MsgFailed,
		syncer.MsgDisabled,
	)
	compareSets(t, "log message", setOf(tableColumn(ops.section(t, "Messages"), 1)...), messages)
	outcomes := []string{
		admission.OutcomePatched, admission.OutcomeAllowed, admission.OutcomeMalformed,
		syncer.OutcomeWritten, syncer.OutcomeStateRecorded, syncer.OutcomeUnchanged, syncer.OutcomeRefused, syncer.OutcomeError,
		syncer.OutcomeDisabled,
	}
	keys := ops.section(t, "Keys")
	for _, o := range outcomes {
		if !strings.Contains(keys, "`"+o+"`") {
			t.Errorf("outcome %q is not documented in the Keys section of docs/operations.md", o)
		}
	}
}

// The check ids of operations.md are exactly those of the health
// command's contract, and of its catalogue of words.
func TestCheckIDsMatchTheContract(t *testing.T) {
	contract := setOf("webhook-pods", "syncer-lease", "ca-secret", "webhook-configuration", "ca-bundle",
		"webhook-endpoints", "served-certificate", "admission", "kyma-pool", "placement", "namespace")
	checks := readDoc(t, "docs/operations.md").section(t, "Checks")
	compareSets(t, "check id", setOf(tableColumn(checks, 0)...), contract)
	compareSets(t, "check id in the catalogue", contract, setOf(slices.Collect(maps.Keys(check.Catalogue()))...))
}

// kubectlForm matches a kubectl command in a remediation: kubectl, an
// optional -n and its value, and then the subcommand and what it acts on,
// the words up to the first flag, placeholder or punctuation.
var kubectlForm = regexp.MustCompile(`kubectl (?:-n \S+ )?([a-z][a-z0-9.,-]*[a-z0-9])(?: ([a-z][a-z0-9.,-]*[a-z0-9]))?`)

// remediationCommands returns the forms of the kubectl commands in texts,
// "get pods" for "kubectl -n kyma-system get pods -l ...".
func remediationCommands(texts ...string) map[string]bool {
	out := map[string]bool{}
	for _, text := range texts {
		for _, m := range kubectlForm.FindAllStringSubmatch(text, -1) {
			out[strings.TrimSpace(m[1]+" "+m[2])] = true
		}
	}
	return out
}

// Each item's row of the remediation table in operations.md ("Checks")
// names exactly the kubectl commands that the item's remediations can
// print, as the catalogue of check's words holds them: a command the
// documents promise that check never prints fails, and so does one that
// check prints and the documents leave out.
func TestCheckRemediationsMatchTheCatalogue(t *testing.T) {
	documented := map[string][]string{}
	_, table, found := strings.Cut(readDoc(t, "docs/operations.md").section(t, "Checks"), remediationHeader)
	if !found {
		t.Fatalf("operations.md (\"Checks\") has no table under the header %q", remediationHeader)
	}
	for l := range strings.SplitSeq(strings.TrimSpace(table), "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if m := firstColumnCode.FindStringSubmatch("|" + strings.TrimSpace(cells[0])); m != nil && len(cells) == 2 {
			documented[m[1]] = inlineSpans(cells[1])
		}
	}
	catalogue := check.Catalogue()
	for id, texts := range catalogue {
		var forms []string
		for _, span := range documented[id] {
			forms = append(forms, "kubectl "+span)
		}
		compareSets(t, id+" remediation command", remediationCommands(forms...), remediationCommands(texts...))
	}
	for id := range documented {
		if _, ok := catalogue[id]; !ok {
			t.Errorf("operations.md names remediation commands of %q, which check does not have", id)
		}
	}
}

// remediationHeader heads the table of operations.md ("Checks") that names
// each item's remediation commands.
const remediationHeader = "| Id | Commands the remediation names |"

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	repoPath = regexp.MustCompile(`^(?:deploy|docs|cmd|pkg|hack|test)/[A-Za-z0-9._/-]*[A-Za-z0-9_]$|^Dockerfile\.[a-z]+$`)
)

// Every relative link points at a file that exists, and at a heading that
// exists; every repository path in a code span exists.
func TestLinksAndPathsExist(t *testing.T) {
	root := tools.MustRepoRoot(t)
	for _, d := range readDocs(t) {
		for _, m := range mdLink.FindAllStringSubmatch(prose(d.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(root, filepath.Dir(d.path), file)
			if file == "" {
				path = filepath.Join(root, d.path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				if _, statErr := os.Stat(path); statErr != nil {
					t.Errorf("%s links to %s, which does not exist", d.path, target)
					continue
				}
			}
			if anchor != "" && !hasAnchor(string(data), anchor) {
				t.Errorf("%s links to %s, but %s has no heading with that anchor", d.path, target, file)
			}
		}
		for _, span := range inlineSpans(d.text) {
			if !repoPath.MatchString(span) {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, span)); err != nil {
				t.Errorf("%s names %s, which does not exist", d.path, span)
			}
		}
	}
}

// hasAnchor reports whether markdown has a heading whose GitHub anchor is
// anchor.
func hasAnchor(markdown, anchor string) bool {
	for l := range strings.SplitSeq(prose(markdown), "\n") {
		h := strings.TrimLeft(l, "#")
		if len(h) == len(l) || !strings.HasPrefix(h, " ") {
			continue
		}
		if slug(strings.TrimSpace(h)) == anchor {
			return true
		}
	}
	return false
}

// slug is GitHub's heading anchor: lower case, spaces to hyphens, and only
// letters, digits, hyphens and underscores kept.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// runbookBase is where every alert's runbook_url points: the documents on
// the repository's main branch, the repository named by the module path.
func runbookBase(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module, ok := strings.CutPrefix(strings.SplitN(string(data), "\n", 2)[0], "module ")
	if !ok || !strings.HasPrefix(module, "github.com/") {
		t.Fatalf("go.mod does not start with a github.com module path")
	}
	return "https://" + strings.TrimSpace(module) + "/blob/main/"
}

// Every alert has a runbook_url to the section of operations.md or
// troubleshooting.md that says what to do, and that section exists: the
// anchor is one GitHub derives from a heading of the document.
func TestAlertRunbooksExist(t *testing.T) {
	base := runbookBase(t)
	alerts := alertRunbookURLs(t)
	if len(alerts) == 0 {
		t.Fatal("deploy/ defines no alerts")
	}
	for _, alert := range slices.Sorted(maps.Keys(alerts)) {
		url := alerts[alert]
		rest, ok := strings.CutPrefix(url, base)
		file, anchor, _ := strings.Cut(rest, "#")
		if !ok || (file != "docs/operations.md" && file != "docs/troubleshooting.md") || anchor == "" {
			t.Errorf("alert %s has runbook_url %q, want %sdocs/operations.md#... or %sdocs/troubleshooting.md#...", alert, url, base, base)
			continue
		}
		if !hasAnchor(readDoc(t, file).text, anchor) {
			t.Errorf("alert %s has runbook_url %s, but %s has no heading with that anchor", alert, url, file)
		}
	}
}
