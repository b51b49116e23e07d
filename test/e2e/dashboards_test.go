package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// DashboardsEnv names the dashboard generator that `make tools` builds from
// hack/tools/dashboards; make exports it.
const DashboardsEnv = "SNATCH_DASHBOARDS"

// Every query of every panel of deploy/components/dashboards, evaluated
// with Prometheus' engine on the live scrapes of a healthy installation
// (the binaries, kube-apiserver and the kube-state-metrics stand-in),
// after the shipped rules and the fleet rules: none shows "No data".
// Between the two scrapes Kyma Pods are created, as a cluster's traffic
// would, so that rates and latency quantiles have samples.
func TestDashboardsShowDataOnAHealthyInstallation(t *testing.T) {
	alerts := newAlertRules(t)
	if alerts == nil {
		t.Skipf("%T cannot be scraped from here", sys)
	}
	dashboards := os.Getenv(DashboardsEnv)
	if dashboards == "" {
		t.Fatalf("$%s is not set: run the suite with make e2e, which builds it", DashboardsEnv)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	before := alerts.scrape(t)
	ns := namespace(t, "e2e-dashboards", true)
	for range 20 {
		if _, err := sys.Clientset().CoreV1().Pods(ns).Create(t.Context(), gatedPod("traffic"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
	}
	now := alerts.scrape(t)

	files, err := filepath.Glob(filepath.Join(root, "deploy/components/dashboards/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in deploy/components/dashboards (%v)", err)
	}
	queries, err := exec.Command(dashboards, append([]string{"queries", "-namespace", "kyma-system"}, files...)...).Output()
	if err != nil {
		t.Fatalf("%s queries: %v", dashboards, err)
	}
	args := []string{"eval", "-queries", "-"}
	for _, m := range before {
		args = append(args, "-before", m)
	}
	for _, m := range now {
		args = append(args, "-metrics", m)
	}
	args = append(args, alerts.rules, filepath.Join(root, "deploy/components/fleet/prometheusrule.yaml"))
	cmd := exec.Command(alerts.bin, args...)
	cmd.Stdin = bytes.NewReader(queries)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var res struct {
		Results []struct {
			Dashboard, Panel, Expr string
			Samples                int
		} `json:"results"`
		NoData []string `json:"noData"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("promrules eval: %v (%v)\n%s", err, runErr, stderr.String())
	}
	shown := 0
	for _, r := range res.Results {
		if r.Samples == 0 {
			t.Errorf("dashboard %q, panel %q shows No data: %s", r.Dashboard, r.Panel, r.Expr)
			continue
		}
		shown++
	}
	if len(res.Results) == 0 {
		t.Fatalf("no query evaluated; promrules said:\n%s", stderr.String())
	}
	logf("dashboards: %d of %d queries show data on the live scrapes", shown, len(res.Results))
}
