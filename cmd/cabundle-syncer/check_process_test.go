package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
)

// runCheckBinary runs `cabundle-syncer check args...` and returns its exit
// code and output.
func runCheckBinary(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A non-zero exit is check's verdict, returned; a run that did not
	// start or did not exit fails the test.
	r, err := process.Command{}.Run(ctx, binary(t), append([]string{"check"}, args...)...)
	if r.Code == -1 {
		t.Fatalf("run check: %v", err)
	}
	return r.Code, r.Stdout, r.Stderr
}

// decodeReport parses the JSON report and checks its shape: the checks in
// their fixed order, and nothing but the fields of check.Result in each.
func decodeReport(t *testing.T, stdout string) check.Report {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var r check.Report
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout)
	}
	want := []string{
		check.IDWebhookPods, check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDCABundle,
		check.IDWebhookEndpoints, check.IDServedCertificate, check.IDAdmission, check.IDKymaPool, check.IDPlacement, check.IDNamespace,
	}
	if len(r.Checks) != len(want) {
		t.Fatalf("%d checks, want %d: %s", len(r.Checks), len(want), stdout)
	}
	for i, c := range r.Checks {
		if c.ID != want[i] {
			t.Errorf("check %d is %s, want %s", i, c.ID, want[i])
		}
	}
	return r
}

// The whole path an operator takes: a real syncer leads and writes the
// caBundle, and the built binary checks the cluster through a kubeconfig.
// No webhook answers in this control plane, so the admission item fails
// by design (test/e2e runs it against the shipped webhook); every other
// item passes, until the certificate Secret goes away.
func TestCheckBinaryPassesARunningSyncerAndFailsWithoutItsSecret(t *testing.T) {
	c := newCluster(t)
	in := startSyncerForCheck(t, c)
	checkArgs := []string{"--kubeconfig=" + c.KubeconfigPath, "--target-namespace=" + namespace, "-o", "json"}
	checkHealthyReport(t, in, checkArgs)

	code, table, _ := runCheckBinary(t, "--kubeconfig="+c.KubeconfigPath)
	if code != check.ExitFail || !strings.HasPrefix(table, "ID ") || !strings.Contains(table, "admission              FAIL") {
		t.Errorf("table: exit code %d, output:\n%s", code, table)
	}

	// The certificate Secret goes away: the syncer keeps the last good
	// bundle, so only ca-secret fails, and ca-bundle has nothing to compare.
	if err := c.Clientset.CoreV1().Secrets(namespace).Delete(context.Background(), secretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	checkReportWithoutSecret(t, checkArgs)
}

// startSyncerForCheck creates a healthy installation but for the Lease and
// the caBundle, and starts a syncer that takes the one and fills the other.
func startSyncerForCheck(t *testing.T, c *framework.Cluster) *checktest.Install {
	t.Helper()
	in := checktest.Healthy(t, namespace, mwcName, time.Now())
	in.Lease = nil
	for i := range in.MWC.Webhooks {
		in.MWC.Webhooks[i].ClientConfig.CABundle = nil
	}
	if err := in.Create(context.Background(), c.Clientset); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--kubeconfig=" + c.KubeconfigPath, "--leader-election-namespace=" + namespace}, leaseFlags...)
	syncer := startSyncerEnv(t, "replica-1", []string{"POD_NAME=" + in.SyncerPod.Name}, args...)
	syncer.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	waitBundle(t, c.Clientset, in.CA.Fingerprint())
	return in
}

// checkHealthyReport runs check and wants every item to pass but
// admission, and the Lease item to name the leader's Pod.
func checkHealthyReport(t *testing.T, in *checktest.Install, checkArgs []string) {
	t.Helper()
	code, stdout, stderr := runCheckBinary(t, checkArgs...)
	if code != check.ExitFail {
		t.Fatalf("healthy cluster without a webhook: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, check.ExitFail, stdout, stderr)
	}
	r := decodeReport(t, stdout)
	for _, c := range r.Checks {
		want := check.StatusPass
		if c.ID == check.IDAdmission {
			want = check.StatusFail
		}
		if c.Status != want || (want == check.StatusPass) != (c.Remediation == "") {
			t.Errorf("%s = %s %q (remediation %q), want %s", c.ID, c.Status, c.Message, c.Remediation, want)
		}
	}
	if lease := r.Checks[1]; !strings.Contains(lease.Message, "held by "+in.SyncerPod.Name+"_") || !strings.Contains(lease.Message, "is Running") {
		t.Errorf("syncer-lease message %q, want the leader's Pod %s named", lease.Message, in.SyncerPod.Name)
	}
}

// checkReportWithoutSecret runs check and wants ca-secret and admission to
// fail, ca-bundle to be skipped, each with a remediation, and the rest to
// pass.
func checkReportWithoutSecret(t *testing.T, checkArgs []string) {
	t.Helper()
	code, stdout, stderr := runCheckBinary(t, checkArgs...)
	if code != 2 {
		t.Fatalf("Secret deleted: exit code %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want nothing: the report is the output", stderr)
	}
	r := decodeReport(t, stdout)
	if r.Status != check.StatusFail {
		t.Errorf("status %s, want FAIL", r.Status)
	}
	want := map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip, check.IDAdmission: check.StatusFail}
	for _, c := range r.Checks {
		w, ok := want[c.ID]
		if !ok {
			w = check.StatusPass
		}
		if c.Status != w {
			t.Errorf("%s = %s %q, want %s", c.ID, c.Status, c.Message, w)
		}
		if w != check.StatusPass && c.Remediation == "" {
			t.Errorf("%s %s has no remediation", c.ID, c.Status)
		}
	}
}

func TestCheckBinaryCannotRun(t *testing.T) {
	// Nothing listens on this port: the API server cannot be reached.
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, freePort(t))
	if err := os.WriteFile(unreachable, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int // 3 unless set
		wantStderr string
	}{
		{name: "missing_kubeconfig_exits_3", args: []string{"--kubeconfig=" + filepath.Join(t.TempDir(), "none")}, wantStderr: "load kubeconfig"},
		{name: "unreachable_api_server_exits_3", args: []string{"--kubeconfig=" + unreachable, "--timeout=10s"}, wantStderr: "cannot reach the API server"},
		{name: "bad_flag_exits_64", args: []string{"--min-ready-webhooks=none"}, wantCode: 64, wantStderr: "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCheckBinary(t, tt.args...)
			if want := cmp.Or(tt.wantCode, 3); code != want {
				t.Errorf("exit code %d, want %d", code, want)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.wantStderr)
			}
		})
	}
}
