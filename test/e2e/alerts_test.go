package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/e2e/kubestatemetrics"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// PromrulesEnv names the rule evaluator that `make tools` builds from
// hack/tools/promrules; make exports it.
const PromrulesEnv = "SNATCH_PROMRULES"

// alertRules evaluates deploy/'s alert rules on the live processes'
// metrics with Prometheus' own rule engine (`promrules conditions`).
type alertRules struct {
	bin, rules string
	dir        string
	scrapes    int
}

// newAlertRules returns the evaluator, or nil when the system cannot be
// scraped from here.
func newAlertRules(t *testing.T) *alertRules {
	t.Helper()
	if _, ok := sys.(metricsSource); !ok {
		t.Logf("%T cannot be scraped from here; alert conditions are covered by the rule unit tests alone", sys)
		return nil
	}
	bin := os.Getenv(PromrulesEnv)
	if bin == "" {
		t.Fatalf("$%s is not set: run the suite with make e2e, which builds it", PromrulesEnv)
	}
	rendered, err := stack.Kustomize("default")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "install.yaml")
	if err := os.WriteFile(rules, rendered, 0o600); err != nil {
		t.Fatal(err)
	}
	return &alertRules{bin: bin, rules: rules, dir: dir}
}

// scrape is one scrape of every target: promrules' -metrics arguments,
// FILE,LABEL=VALUE...
type scrape []string

// scrape reads /metrics of every running replica with the labels the
// ServiceMonitors give them (job is the metrics Service, namespace and pod
// the Pod's), kube-apiserver's /metrics as job apiserver, and the
// kube-state-metrics stand-in as job kube-state-metrics.
func (a *alertRules) scrape(t *testing.T) scrape {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a.scrapes++
	var out scrape
	write := func(name string, data []byte, labels string) {
		path := filepath.Join(a.dir, fmt.Sprintf("%03d-%s.prom", a.scrapes, name))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out = append(out, path+labels)
	}
	targets, err := sys.(metricsSource).MetricsTargets(ctx)
	if err != nil {
		t.Fatalf("list the scrape targets: %v", err)
	}
	for _, r := range targets {
		data, err := r.scrape(ctx)
		if err != nil {
			// A process that ends between the list and the scrape is a
			// target that went away, as its Pod would.
			t.Logf("scrape %s: %v", r.Name, err)
			continue
		}
		write(r.Name, data, fmt.Sprintf(",job=%s-metrics,namespace=%s,pod=%s", r.App, stack.Namespace, r.Name))
	}
	data, err := sys.Clientset().CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("scrape kube-apiserver: %v", err)
	}
	write("kube-apiserver", data, ",job=apiserver")
	ksm, err := kubestatemetrics.Write(ctx, sys.Clientset())
	if err != nil {
		t.Fatalf("kube-state-metrics stand-in: %v", err)
	}
	write("kube-state-metrics", ksm, ",job=kube-state-metrics")
	return out
}

// holding returns the alerts whose condition holds at now, with before as
// the previous scrape (for rate and increase), ignoring each rule's `for`.
func (a *alertRules) holding(t *testing.T, before, now scrape) []string {
	t.Helper()
	args := []string{"conditions"}
	for _, m := range before {
		args = append(args, "-before", m)
	}
	for _, m := range now {
		args = append(args, "-metrics", m)
	}
	cmd := exec.Command(a.bin, append(args, a.rules)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("promrules conditions: %v\n%s", err, stderr.String())
	}
	var c struct {
		Holding []string `json:"holding"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &c); err != nil {
		t.Fatalf("promrules conditions printed %q: %v", stdout.String(), err)
	}
	return c.Holding
}

// assertHolding holds the alerts whose condition holds to exactly want.
// Each objective's burn-rate alerts watch the same calls as the alert of
// its symptom, over windows that the two scrapes cannot span: between two
// scrapes every window's rate is the fault's own, so at least one of them
// holds exactly where the symptom's alert does, and none elsewhere.
func (a *alertRules) assertHolding(t *testing.T, what string, before, now scrape, want ...string) {
	t.Helper()
	got := a.holding(t, before, now)
	slices.Sort(want)
	if want == nil {
		want = []string{}
	}
	var burns []string
	for prefix, b := range burnAlerts {
		of := func(name string) bool { return strings.HasPrefix(name, prefix) }
		held := slices.Collect(func(yield func(string) bool) {
			for _, name := range got {
				if of(name) && !yield(name) {
					return
				}
			}
		})
		got = slices.DeleteFunc(got, of)
		expected := slices.Contains(want, b.symptom)
		if b.followsSymptom && expected && len(held) == 0 || b.needsSymptom && !expected && len(held) > 0 {
			t.Errorf("%s: burn alerts %s* holding %v, while %s is expected: %v", what, prefix, held, b.symptom, expected)
		}
		burns = append(burns, held...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: alert conditions holding %v, want exactly %v", what, got, want)
		return
	}
	logf("%s: alert conditions holding %v, and of the objectives' burn alerts %v, as expected", what, got, burns)
}

// burnAlerts are the prefixes of each objective's burn-rate alerts, with
// the alert of the symptom it burns on. A call that fails open is a term
// error, so the term objective burns only while calls fail open; but a few
// fail-opens among many calls stay under its burn thresholds. The latency
// objective burns whenever calls are slow; but a burst of unthrottled
// creates on two busy cores makes some calls slower than 100 ms without
// the sustained p99 of KimSnatchWebhookCallsSlow.
var burnAlerts = map[string]struct {
	symptom string
	// needsSymptom: the burn alerts hold only with the symptom's alert;
	// followsSymptom: they hold whenever it does.
	needsSymptom, followsSymptom bool
}{
	"KimSnatchTermSLO":    {symptom: alertFailingOpen, needsSymptom: true},
	"KimSnatchLatencySLO": {symptom: alertCallsSlow, followsSymptom: true},
}

// getWith reads url's body with client.
func getWith(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// alertNames are the alerts of deploy/, by the item they watch.
const (
	alertWebhookUnavailable = "KimSnatchWebhookUnavailable"
	alertFailingOpen        = "KimSnatchWebhookFailingOpen"
	alertSecretInvalid      = "KimSnatchCertificateSecretInvalid"
	alertOutOfSync          = "KimSnatchCABundleOutOfSync"
	alertSyncErrors         = "KimSnatchCABundleSyncErrors"
	alertNoLeader           = "KimSnatchCABundleSyncerNoLeader"
	alertPoolHasNoNodes     = "KimSnatchKymaPoolHasNoNodes"
	alertPodsOffPool        = "KimSnatchKymaPodsOffPool"
)

// slowCallsShare is the threshold of KimSnatchWebhookCallsSlow
// (deploy/webhook/prometheusrule.yaml): the share of calls over 1 s.
const slowCallsShare = 0.05

// slowCallShare returns how many calls the API server made to the webhook
// between two scrapes, and the share of them that took longer than 1 s,
// counted from its latency histogram.
func slowCallShare(t *testing.T, before, now scrape) (share, calls float64) {
	t.Helper()
	count := func(s scrape) (all, fast float64) {
		i := slices.IndexFunc(s, func(m string) bool { return strings.HasSuffix(m, ",job=apiserver") })
		if i < 0 {
			t.Fatal("the scrape has no kube-apiserver metrics")
		}
		data, err := os.ReadFile(strings.TrimSuffix(s[i], ",job=apiserver"))
		if err != nil {
			t.Fatal(err)
		}
		families, err := stack.ParseMetrics(data)
		if err != nil {
			t.Fatalf("read the kube-apiserver metrics: %v", err)
		}
		entry := map[string]string{"name": stack.WebhookEntryName, "type": "admit"}
		n, within, err := stack.HistogramCounts(families, "apiserver_admission_webhook_admission_duration_seconds", entry, 1)
		if err != nil {
			t.Fatal(err)
		}
		return float64(n), float64(within)
	}
	all0, fast0 := count(before)
	all1, fast1 := count(now)
	if all1 == all0 {
		return 0, 0
	}
	return 1 - (fast1-fast0)/(all1-all0), all1 - all0
}
