package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSmokeRunFillsEverySection runs every section of the harness at smoke
// scale and asserts outcomes only: every section produced figures from a
// non-zero number of samples, the JSON is valid, and every Pod in arms B
// and C carried exactly the preferred term (the run fails otherwise).
// Timing is never asserted: this machine is shared, and `make bench` is
// where the figures mean something.
func TestSmokeRunFillsEverySection(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and starts two control planes")
	}
	cfg := Smoke()
	cfg.WorkDir = t.TempDir()
	cfg.Progress = testWriter{t}
	start := time.Now()
	res, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("harness ran in %s", time.Since(start).Round(time.Second))
	back := roundTrip(t, res)
	if back.Machine.CPUs < 1 || back.Machine.GoVersion == "" {
		t.Errorf("machine = %+v, want CPUs and a Go version", back.Machine)
	}
	checkWebhookFigures(t, back.Webhook, cfg)
	checkHandlerFigures(t, back.Handler)
	checkAPIServerFigures(t, back.APIServer, cfg)
	if s := back.Syncer; s == nil {
		t.Error("no syncer figures")
	} else if s.Samples != cfg.Rotations || s.PropagationP99Ms.Value <= 0 || s.PropagationP99Ms.Baseline <= 0 || s.RSSMiB.Value <= 0 || s.RSSMiB.Baseline <= 0 {
		t.Errorf("syncer figures = %+v, want %d samples, latencies and RSS", s, cfg.Rotations)
	}
	if c := back.Check; c == nil {
		t.Error("no check figures")
	} else if len(c.CheckRuns) != cfg.CheckRuns || len(c.BaselineRuns) != cfg.CheckRuns || c.KymaPods == 0 ||
		c.PeakRSSMiB.Value <= 0 || c.PeakRSSMiB.Baseline <= 0 || c.MedianSeconds.Value <= 0 || c.MemoryLimitMiB <= 0 {
		t.Errorf("check figures = %+v, want %d runs of each, Kyma Pods, RSS, times and the Job's limit", c, cfg.CheckRuns)
	}
	if h := back.Hostile; h == nil {
		t.Error("no hostile figures")
	} else if h.Quiet.Reviews == 0 || h.Hostile.Reviews == 0 || h.RSSMiB.Value <= 0 || h.RSSMiB.Baseline <= 0 || h.P99Ms.Baseline <= 0 {
		t.Errorf("hostile figures = %+v, want reviews, RSS and p99 with and without the hostile clients", h)
	}
	if len(back.Targets) == 0 {
		t.Error("no target was checked")
	}
}

// roundTrip writes res as JSON, reads it back and logs its table.
func roundTrip(t *testing.T, res *Results) Results {
	path := filepath.Join(t.TempDir(), "results.json")
	if err := res.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("results.json does not decode: %v", err)
	}
	var table strings.Builder
	if err := back.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	return back
}

func checkWebhookFigures(t *testing.T, w *WebhookResults, cfg Config) {
	t.Helper()
	if w == nil {
		t.Error("no webhook figures")
		return
	}
	if want := len(payloads) * len(cfg.Concurrency); len(w.Cells) != want {
		t.Errorf("%d webhook cells, want %d", len(w.Cells), want)
	}
	for _, c := range w.Cells {
		for name, s := range map[string]LoadStats{"snatch": c.Snatch, "generic": c.Generic} {
			if s.Reviews == 0 || s.ReviewsPerSecond <= 0 || s.P99Ms <= 0 || s.RSSMiB <= 0 {
				t.Errorf("%s %s concurrency %d: %+v, want reviews, a rate, a p99 and an RSS", name, c.Payload, c.Concurrency, s)
			}
			if s.Errors != 0 {
				t.Errorf("%s %s concurrency %d: %d reviews failed", name, c.Payload, c.Concurrency, s.Errors)
			}
		}
	}
	if w.Reviews["snatch_webhook_admission_total_patched"] == 0 {
		t.Error("the webhook counted no patched review")
	}
}

func checkHandlerFigures(t *testing.T, h *HandlerResults) {
	t.Helper()
	if h == nil || len(h.Rows) == 0 || len(h.Compare) == 0 {
		t.Errorf("handler figures = %+v, want rows and comparisons", h)
		return
	}
	for _, b := range h.Rows {
		if b.Iterations == 0 || b.NsPerOp <= 0 {
			t.Errorf("handler %s/%s: %+v, want iterations and ns/op", b.Payload, b.Variant, b)
		}
	}
}

func checkAPIServerFigures(t *testing.T, a *APIServerResults, cfg Config) {
	t.Helper()
	if a == nil {
		t.Error("no API-server figures")
		return
	}
	for name, s := range map[string]ArmStats{"A": a.A, "B": a.B, "C": a.C} {
		if s.Pods != cfg.Pods || s.Errors != 0 || s.PodsPerSecond <= 0 {
			t.Errorf("arm %s: %+v, want %d Pods created without error", name, s, cfg.Pods)
		}
	}
	if want := len(diffCases()); a.DifferentialCases != want {
		t.Errorf("the webhook and the policy agree on %d differential Pods, want all %d", a.DifferentialCases, want)
	}
	if a.B.WithTerm != a.B.Pods || a.C.WithTerm != a.C.Pods || a.A.WithTerm != 0 {
		t.Errorf("Pods with exactly the term: A %d, B %d of %d, C %d of %d; want none in A and all in B and C",
			a.A.WithTerm, a.B.WithTerm, a.B.Pods, a.C.WithTerm, a.C.Pods)
	}
}

// testWriter sends the harness's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
