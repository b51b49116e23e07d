package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// skewRulesSection is the section of docs/releasing.md that lists what
// the rules of each binary's release read of the other binary.
const skewRulesSection = "### What the rules read of the other binary"

// metricPrefixes are the prefixes of each binary's metrics (STYLE.md).
var metricPrefixes = map[string]string{"snatch-webhook": "snatch_webhook_", "cabundle-syncer": "cabundle_syncer_"}

// skewRelease is one binary's install.yaml as hack/release/release.sh renders it.
type skewRelease struct {
	binary, version string
	objects         []*unstructured.Unstructured
}

// The PrometheusRules of a release of one binary read of the other binary
// exactly what docs/releasing.md lists (skewRulesSection), and a release
// of the other binary, one minor away, as hack/release/release.sh renders it,
// scrapes each job and runs each Deployment that they name; its binary
// registers each metric, and its rules record each record. The list is
// what a release of either binary may change only in a major release
// ("What a release may change"), so a rule that starts to read something
// new of the other binary, or a release that renames what a rule reads,
// shows here and in the document at once.
//
// Both releases are rendered from the bases of the work tree, which is
// what the release tooling renders; the metrics are those this commit's
// binaries register (test/metricdefs).
func TestSkewRulesReadOfTheOtherBinaryOnlyWhatReleasingListsAndItServes(t *testing.T) {
	documented := documentedRuleReads(t)
	pairs := [][2]skewRelease{
		{renderSkewRelease(t, "snatch-webhook", "v0.3.0"), renderSkewRelease(t, "cabundle-syncer", "v0.2.0")},
		{renderSkewRelease(t, "cabundle-syncer", "v0.2.0"), renderSkewRelease(t, "snatch-webhook", "v0.1.0")},
	}
	metrics := codeMetrics(t)
	for _, pair := range pairs {
		rules, other := pair[0], pair[1]
		t.Run(strings.ReplaceAll(rules.binary+"_"+rules.version+"_beside_"+other.binary+"_"+other.version, "-", "_"), func(t *testing.T) {
			reads := ruleReadsOfOther(t, rules, other.binary)
			if len(reads) == 0 {
				t.Fatalf("the rules of %s %s read nothing of %s", rules.binary, rules.version, other.binary)
			}
			jobs := scrapedJobs(t, other.objects)
			deployments := names(objects.OfKind(other.objects, "Deployment"))
			records := releaseRecords(t, other)
			for _, r := range reads {
				var served bool
				switch r.kind {
				case "job":
					served = slices.Contains(jobs, r.name)
				case "deployment":
					served = slices.Contains(deployments, r.name)
				case "metric":
					served = metrics[r.name] && strings.HasPrefix(r.name, metricPrefixes[other.binary])
				case "record":
					served = slices.Contains(records, r.name)
				}
				if !served {
					t.Errorf("rule %s of %s %s reads the %s %s, which %s %s does not serve",
						r.rule, rules.binary, rules.version, r.kind, r.name, other.binary, other.version)
				}
			}
			var got []string
			for _, r := range reads {
				got = append(got, r.name)
			}
			got = slices.Compact(slices.Sorted(slices.Values(got)))
			if want := documented[rules.binary]; !slices.Equal(got, want) {
				t.Errorf("the rules of %s read of %s\n  %v\ndocs/releasing.md (%q) lists\n  %v",
					rules.binary, other.binary, got, skewRulesSection, want)
			}
		})
	}
}

// ruleRead is a name of the other binary that a rule reads: a job, a
// Deployment, a metric or a record.
type ruleRead struct{ rule, kind, name string }

// ruleReadsOfOther returns what the rules of release r read of binary
// other: the jobs and Deployments that r does not have, the metrics of
// other's prefix, and the records that r's rules do not record.
func ruleReadsOfOther(t *testing.T, r skewRelease, other string) []ruleRead {
	t.Helper()
	ownJobs := scrapedJobs(t, r.objects)
	ownDeployments := names(objects.OfKind(r.objects, "Deployment"))
	ownRecords := releaseRecords(t, r)
	var reads []ruleRead
	for _, rl := range releaseRules(t, r) {
		name := rl.Alert + rl.Record
		for _, s := range rl.Selectors {
			switch {
			case strings.HasPrefix(s.Metric, metricPrefixes[other]):
				reads = append(reads, ruleRead{name, "metric", s.Metric})
			case strings.HasPrefix(s.Metric, "kim_snatch:") && !slices.Contains(ownRecords, s.Metric):
				reads = append(reads, ruleRead{name, "record", s.Metric})
			}
			for _, m := range s.Matchers {
				switch {
				case m.Op != "=":
				case m.Name == "job" && !slices.Contains(ownJobs, m.Value):
					reads = append(reads, ruleRead{name, "job", m.Value})
				case m.Name == "deployment" && !slices.Contains(ownDeployments, m.Value):
					reads = append(reads, ruleRead{name, "deployment", m.Value})
				}
			}
		}
	}
	return reads
}

// renderSkewRelease renders the release of binary at version with
// hack/release/release.sh --manifests (docs/releasing.md, "Cutting a release") and
// decodes its install.yaml.
func renderSkewRelease(t *testing.T, binary, version string) skewRelease {
	t.Helper()
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "release")
	process.Command{Env: []string{"KUBECTL=" + kubectl}}.MustRun(t, filepath.Join(tools.MustRepoRoot(t), "hack", "release", "release.sh"), "--manifests", out, binary, version)
	objs := readObjects(t, filepath.Join(out, "install.yaml"))
	return skewRelease{binary: binary, version: version, objects: objs}
}

// releaseRules returns every rule of the release's PrometheusRules with
// its selectors, as `promrules selectors` reads them.
func releaseRules(t *testing.T, r skewRelease) []rule {
	t.Helper()
	prs := objects.OfKind(r.objects, "PrometheusRule")
	if len(prs) == 0 {
		t.Fatalf("%s %s has no PrometheusRule", r.binary, r.version)
	}
	return ruleSelectors(t, prs)
}

// releaseRecords returns the records of the release's rules.
func releaseRecords(t *testing.T, r skewRelease) []string {
	t.Helper()
	var out []string
	for _, rl := range releaseRules(t, r) {
		if rl.Record != "" {
			out = append(out, rl.Record)
		}
	}
	return out
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

// documentedRuleReads returns, by binary, the names that the table of
// skewRulesSection lists in code spans in the row of the binary's rules,
// sorted.
func documentedRuleReads(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), "docs", "releasing.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+skewRulesSection+"\n")
	if !ok {
		t.Fatalf("docs/releasing.md has no section %q", skewRulesSection)
	}
	if end := regexp.MustCompile(`(?m)^#{1,3} `).FindStringIndex(section); end != nil {
		section = section[:end[0]]
	}
	span := regexp.MustCompile("`([^`]+)`")
	out := map[string][]string{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 {
			continue
		}
		binary := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if _, ok := metricPrefixes[binary]; !ok {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(cells[2], -1) {
			out[binary] = append(out[binary], m[1])
		}
		out[binary] = slices.Compact(slices.Sorted(slices.Values(out[binary])))
	}
	for binary := range metricPrefixes {
		if len(out[binary]) == 0 {
			t.Errorf("docs/releasing.md (%q) has no row for the rules of %s", skewRulesSection, binary)
		}
	}
	return out
}
