package e2e

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

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
	for _, doc := range yamlDocs(t, "test/e2e/overlay/shorter-scrape.yaml") {
		if err := utilyaml.Unmarshal(doc, &ops); err != nil {
			t.Fatal(err)
		}
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
	var got time.Duration
	for _, doc := range yamlDocs(t, "test/e2e/neighbours/monitoring/prometheus.yaml") {
		var o struct {
			Kind string
			Spec struct{ EvaluationInterval string }
		}
		if err := utilyaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind != "Prometheus" {
			continue
		}
		d := parseInterval(t, o.Spec.EvaluationInterval)
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

// yamlDocs returns the documents of a YAML stream, by its path from the
// repository's root.
func yamlDocs(t testing.TB, path string) [][]byte {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, doc)
	}
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
