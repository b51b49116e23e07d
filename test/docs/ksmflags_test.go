package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/e2e/kubestatemetrics"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// labelsAllowlist matches a label allowlist as kube-state-metrics reads
// it: entries resource=[label,...] separated by commas.
var labelsAllowlist = regexp.MustCompile(`[a-z*]+=\[[^\]\n]*\](?:,[a-z*]+=\[[^\]\n]*\])*`)

// optInList matches --metric-opt-in-list with its value, after = or a
// space.
var optInList = regexp.MustCompile(`--metric-opt-in-list[= ](kube_[a-z0-9_,]*)`)

// quotingFiles returns, by path, the texts that may quote the values of
// kube-state-metrics' flags: the markdown files of the repository's root,
// docs/ and deploy/, deploy/'s YAML, whose comments say what the rules
// need, and the end-to-end suite's neighbours, whose kube-state-metrics
// stand-in runs with them.
func quotingFiles(t *testing.T) map[string]string {
	t.Helper()
	root := tools.MustRepoRoot(t)
	var paths []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		found, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, found...)
	}
	for _, dir := range []string{"deploy", "test/e2e/neighbours"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && (strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".yaml")) {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	texts := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		texts[filepath.ToSlash(rel)] = string(b)
	}
	return texts
}

// The values of kube-state-metrics' flags that deploy/'s rules need live in
// one place, package kubestatemetrics, which the end-to-end suite's
// stand-in runs with. Every label allowlist and opt-in list that a document
// or deploy/ gives is that value, whole: a part of it in a Helm value or a
// command would leave labels out, and a value of its own would drift. The
// documents give the allowlist at least twice, in the Helm values and in
// the Fix that merges it.
func TestDocumentedKubeStateMetricsFlagsAreTheOneValue(t *testing.T) {
	found := map[string]int{}
	for path, text := range quotingFiles(t) {
		for _, v := range labelsAllowlist.FindAllString(text, -1) {
			found[path]++
			if v != kubestatemetrics.LabelsAllowlist {
				t.Errorf("%s gives the label allowlist %s; want %s, the value of test/e2e/kubestatemetrics", path, v, kubestatemetrics.LabelsAllowlist)
			}
		}
		for _, m := range optInList.FindAllStringSubmatch(text, -1) {
			if m[1] != kubestatemetrics.OptInMetrics {
				t.Errorf("%s gives --metric-opt-in-list %s; want %s, the value of test/e2e/kubestatemetrics", path, m[1], kubestatemetrics.OptInMetrics)
			}
		}
	}
	if n := found["docs/operations.md"]; n < 2 {
		t.Errorf("docs/operations.md gives the label allowlist %d times; want the Helm values and the Fix of %s at least", n, ksmFixAlert)
	}
}

// The pattern takes a value whole, wildcards and spaces included, and
// nothing that merely holds = or brackets.
func TestLabelsAllowlistPatternFindsWholeValuesOnly(t *testing.T) {
	text := "a `nodes=[a/b],pods=[*]` b `pods=[]`, `*=[x, y]` and `x == [1]`, `f(a)=[b]`"
	want := []string{"nodes=[a/b],pods=[*]", "pods=[]", "*=[x, y]"}
	got := labelsAllowlist.FindAllString(text, -1)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labelsAllowlist finds %q in %q, want %q", got, text, want)
	}
}
