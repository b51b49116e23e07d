package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// assertRunbooksAtTag checks that every alert of the release file at path
// links its runbook in the documents of tag, the release's own, not in
// those of main: a cluster runs the release, and main may already document
// another. The repository is the one of the module path in go.mod.
func assertRunbooksAtTag(t *testing.T, repo, path, tag string) {
	t.Helper()
	objs := readObjects(t, path)
	want := "https://" + modulePath(t, repo) + "/blob/" + tag + "/docs/"
	n := 0
	for _, o := range objs {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		for name, rule := range rulesByName(t, o) {
			if _, ok := rule["alert"]; !ok {
				continue
			}
			n++
			url, _, _ := unstructured.NestedString(rule, "annotations", "runbook_url")
			if !strings.HasPrefix(url, want) {
				t.Errorf("%s: alert %s has runbook_url %q, want one under %s", filepath.Base(path), name, url, want)
			}
		}
	}
	if n == 0 {
		t.Errorf("%s holds no alerts", filepath.Base(path))
	}
}

// modulePath returns the module path of go.mod in repo.
func modulePath(t *testing.T, repo string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	module, ok := strings.CutPrefix(first, "module ")
	if !ok {
		t.Fatal("go.mod does not start with its module path")
	}
	return strings.TrimSpace(module)
}
