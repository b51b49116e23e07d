package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The suite's Prometheus intervals, read from the files that set them, so
// that what the suite derives from them (the dashboards' rate interval, the
// faults' watch after a heal) follows a change of either file.

// scrapeInterval is how often the suite scrapes the shipped
// ServiceMonitors: the interval test/e2e/overlay/shorter-scrape.yaml puts
// into their endpoint.
func scrapeInterval(t testing.TB) time.Duration {
	t.Helper()
	var ops []struct{ Op, Path, Value string }
	if err := utilyaml.Unmarshal(repoFile(t, "test/e2e/overlay/shorter-scrape.yaml"), &ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.Op == "replace" && op.Path == "/spec/endpoints/0/interval" {
			return parseInterval(t, op.Value)
		}
	}
	t.Fatal("test/e2e/overlay/shorter-scrape.yaml sets no endpoint interval")
	return 0
}

// evaluationInterval is how often the suite's Prometheus servers evaluate
// the rules (test/e2e/neighbours/monitoring/prometheus.yaml); it fails t
// unless every one of them has the same.
func evaluationInterval(t testing.TB) time.Duration {
	t.Helper()
	objs, err := objects.Decode(repoFile(t, "test/e2e/neighbours/monitoring/prometheus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got time.Duration
	for _, o := range objects.OfKind(objs, "Prometheus") {
		interval, _, _ := unstructured.NestedString(o.Object, "spec", "evaluationInterval")
		d := parseInterval(t, interval)
		if got != 0 && d != got {
			t.Fatalf("the suite's Prometheus servers evaluate every %v and every %v", got, d)
		}
		got = d
	}
	if got == 0 {
		t.Fatal("no Prometheus with an evaluationInterval in test/e2e/neighbours/monitoring/prometheus.yaml")
	}
	return got
}

// repoFile returns a file, by its path from the repository's root.
func repoFile(t testing.TB, path string) []byte {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseInterval parses a Prometheus duration of the form the suite's files
// use, such as 5s.
func parseInterval(t testing.TB, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("interval %q: want a positive duration (%v)", s, err)
	}
	return d
}
