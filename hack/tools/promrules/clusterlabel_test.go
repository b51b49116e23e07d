package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The expected output is written by hand beside the input, and the
// renamed rules are held to the rule unit tests of test/manifests with
// their series relabelled as text: neither oracle runs the rename's own
// walk.

func TestClusterLabelRenamesTheLabelWhereRulesNameIt(t *testing.T) {
	want, err := os.ReadFile(testdata("clusterlabel-shoot.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := promrules(t, "", "cluster-label", "shoot", testdata("clusterlabel.yaml"))
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, stderr)
	}
	if stdout != string(want) {
		t.Errorf("output differs from testdata/clusterlabel-shoot.yaml:\n%s", stdout)
	}
}

func TestClusterLabelTwiceChangesNothing(t *testing.T) {
	for _, tc := range []struct{ name, file, to string }{
		{name: "hand_written_rules_change_only_once", file: testdata("clusterlabel.yaml"), to: "shoot"},
		{name: "webhook_rules_change_only_once", file: shipped("deploy/webhook/prometheusrule.yaml"), to: "runtime_id"},
		{name: "syncer_rules_change_only_once", file: shipped("deploy/syncer/prometheusrule.yaml"), to: "runtime_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			once := clusterLabel1(t, tc.to, tc.file)
			code, twice, stderr := promrules(t, once, "cluster-label", tc.to)
			if code != 0 {
				t.Fatalf("second run: exit %d, want 0:\n%s", code, stderr)
			}
			if twice != once {
				t.Errorf("the second run changed the first one's output:\n%s", twice)
			}
		})
	}
}

func TestClusterLabelToClusterChangesNoByte(t *testing.T) {
	for _, file := range []string{testdata("clusterlabel.yaml"), shipped("deploy/webhook/prometheusrule.yaml")} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := clusterLabel1(t, "cluster", file); got != string(data) {
			t.Errorf("%s: renaming cluster to cluster changed the file:\n%s", file, got)
		}
	}
}

// The rule unit tests of test/manifests whose series carry the label
// cluster pass on the shipped rules (test/manifests runs them). Renamed,
// the rules must pass the same tests with the label renamed in the series,
// the expected alerts and samples: they fire and stay silent as the
// shipped rules do, apart for each runtime.
func TestClusterLabelRenamedRulesGiveTheSameAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the shipped rules")
	}
	const to = "runtime_id"
	for _, name := range []string{"clusters.yaml", "fleet.yaml", "fleet-alerts.yaml"} {
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			orig := shipped(filepath.Join("test/manifests/testdata/rules", name))
			code, stdout, stderr := promrules(t, "", "test", orig)
			if code != 0 {
				t.Fatalf("the shipped rules fail %s: exit %d\n%s%s", name, code, stdout, stderr)
			}
			renamed := relabelledRuleTest(t, orig, to)
			code, stdout, stderr = promrules(t, "", "test", renamed)
			if code != 0 {
				t.Fatalf("the renamed rules fail %s with %s for cluster: exit %d\n%s%s", name, to, code, stdout, stderr)
			}
		})
	}
}

func TestClusterLabelRefusesWhatItCannotRename(t *testing.T) {
	rules := func(rules string) string {
		return "groups:\n  - name: g\n    rules:\n" + rules
	}
	for _, tc := range []struct {
		name, to, stdin string
		code            int
		want            string
	}{
		{
			name:  "a_new_name_in_use_is_refused",
			to:    "shoot",
			stdin: rules("      - record: a\n        expr: sum by (cluster) (up)\n      - record: b\n        expr: sum by (shoot) (up)\n"),
			code:  1, want: "would merge the two",
		},
		{
			name:  "a_new_name_that_is_a_rule_label_is_refused",
			to:    "shoot",
			stdin: rules("      - record: a\n        expr: sum by (cluster) (up)\n        labels:\n          shoot: x\n"),
			code:  1, want: "would merge the two",
		},
		{
			name:  "a_template_reading_the_label_is_refused",
			to:    "shoot",
			stdin: rules("      - alert: A\n        expr: up{cluster=\"a\"} == 0\n        annotations:\n          summary: '{{ $labels.cluster }} is down'\n"),
			code:  1, want: "the rename does not edit templates",
		},
		{
			name:  "an_expression_that_does_not_parse_is_refused",
			to:    "shoot",
			stdin: rules("      - record: a\n        expr: sum by (cluster (up)\n"),
			code:  1, want: "parse error",
		},
		{
			// Printed anew, since the metric is spelled as the label, the
			// expression would lose its comment.
			name:  "a_comment_in_an_expression_printed_anew_is_refused",
			to:    "shoot",
			stdin: rules("      - record: a\n        expr: |\n          # the sum\n          sum by (cluster) (cluster)\n"),
			code:  1, want: "would lose its comments",
		},
		{
			name:  "a_multi_line_plain_expression_is_refused",
			to:    "shoot",
			stdin: rules("      - record: a\n        expr: sum by (cluster)\n          (up)\n"),
			code:  1, want: "not a block scalar",
		},
		{
			name: "neither_rules_nor_a_prometheus_rule_is_refused", to: "shoot",
			stdin: "apiVersion: v1\nkind: ConfigMap\n",
			code:  1, want: "neither a rule file nor a PrometheusRule",
		},
		{name: "a_reserved_name_is_a_usage_error", to: "__name__", stdin: rules("      - record: a\n        expr: up\n"), code: 2, want: "not a label name"},
		{name: "not_a_label_name_is_a_usage_error", to: "runtime-id", stdin: rules("      - record: a\n        expr: up\n"), code: 2, want: "not a label name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := promrules(t, tc.stdin, "cluster-label", tc.to)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", code, tc.code, tc.want, stderr)
			}
			if stdout != "" {
				t.Errorf("printed rules on a refusal:\n%s", stdout)
			}
		})
	}
}

// shipped names a file of the repository.
func shipped(path string) string { return filepath.Join("..", "..", "..", path) }

// clusterLabel1 returns what `cluster-label to file` prints, failing the
// test when it does not succeed.
func clusterLabel1(t *testing.T, to, file string) string {
	t.Helper()
	code, stdout, stderr := promrules(t, "", "cluster-label", to, file)
	if code != 0 {
		t.Fatalf("cluster-label %s %s: exit %d, want 0:\n%s", to, file, code, stderr)
	}
	return stdout
}

// relabelledRuleTest writes the rule unit test file orig with each of its
// rule files renamed by cluster-label to, and the label cluster renamed to
// to in its series, expressions and expected labels, and returns its path.
func relabelledRuleTest(t *testing.T, orig, to string) string {
	t.Helper()
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	var tf testFile
	if err := yaml.Unmarshal(data, &tf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i, rf := range tf.RuleFiles {
		renamed := filepath.Join(dir, itoa(i)+"-"+filepath.Base(rf))
		out := clusterLabel1(t, to, filepath.Join(filepath.Dir(orig), rf))
		if err := os.WriteFile(renamed, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		tf.RuleFiles[i] = renamed
	}
	word := regexp.MustCompile(`\bcluster\b`)
	rename := func(s string) string { return word.ReplaceAllString(s, to) }
	for i := range tf.Tests {
		tg := &tf.Tests[i]
		for j := range tg.InputSeries {
			tg.InputSeries[j].Series = rename(tg.InputSeries[j].Series)
		}
		for _, at := range tg.AlertRuleTests {
			for _, a := range at.ExpAlerts {
				if v, ok := a.ExpLabels["cluster"]; ok {
					delete(a.ExpLabels, "cluster")
					a.ExpLabels[to] = v
				}
			}
		}
		for j := range tg.PromqlExprTests {
			pt := &tg.PromqlExprTests[j]
			pt.Expr = rename(pt.Expr)
			for k := range pt.ExpSamples {
				pt.ExpSamples[k].Labels = rename(pt.ExpSamples[k].Labels)
			}
		}
	}
	out, err := yaml.Marshal(&tf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `cluster="`) {
		t.Fatalf("the relabelled test still has series labelled cluster:\n%s", out)
	}
	path := filepath.Join(dir, filepath.Base(orig))
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
