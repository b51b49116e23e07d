package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// docs/operations.md and docs/troubleshooting.md run the check inside a
// syncer Pod, where it has the syncer's ServiceAccount, and say that the
// webhook Pods are skipped there, as the account may not read them. This
// runs the same command with the same credentials, a token of
// ServiceAccount cabundle-syncer under deploy/syncer's RBAC: the Secret,
// the MutatingWebhookConfiguration and the Lease are readable, the Pods
// are not.
func TestCheckWithTheSyncersServiceAccountSkipsThePods(t *testing.T) {
	framework.InTier(t, framework.Full, "a second way to run the check; the smoke runs it once")
	framework.Shares(t)
	c := newChecker(t)
	ctx := t.Context()
	kubeconfig := filepath.Join(t.TempDir(), "cabundle-syncer.kubeconfig")
	if err := framework.WriteServiceAccountKubeconfig(ctx, sys.Clientset(), sys.KubeconfigPath(),
		stack.Namespace, stack.SyncerServiceAccount, 10*time.Minute, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// In the Pod the client finds its credentials itself; here they come
	// from $KUBECONFIG, the next place it looks.
	env := []string{"KUBECONFIG=" + kubeconfig}
	// It may not read Pods, Nodes or Services: webhook-pods, kyma-pool,
	// placement and webhook-endpoints are skipped, served-certificate has
	// no endpoint to dial, and syncer-lease, which reads the Lease but not
	// its holder's Pod, is skipped too (one rule for access denied). A run
	// that did not see every item is INCOMPLETE (exit 4), never a PASS,
	// even on a healthy installation.
	want := map[string]check.Status{
		check.IDWebhookPods: check.StatusSkip, check.IDKymaPool: check.StatusSkip, check.IDPlacement: check.StatusSkip,
		check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip, check.IDSyncerLease: check.StatusSkip,
		// Nor create the admission item's dry-run Pod.
		check.IDAdmission: check.StatusSkip,
	}

	// docs/troubleshooting.md: kubectl -n kyma-system exec deploy/cabundle-syncer -- /cabundle-syncer check
	table := c.run(t, env)
	logf("check with the syncer's ServiceAccount (%s):\n%s", table.took.Round(time.Millisecond), table.stdout)
	assertTable(t, table, want)

	// docs/operations.md: ... -- /cabundle-syncer check -o json
	run, r := c.report(t, env, "-o", "json")
	assertReport(t, run, r, want)
	if run.code != check.ExitIncomplete || r.Status != check.StatusIncomplete {
		t.Errorf("status %s, exit code %d with the syncer's ServiceAccount, want %s, %d", r.Status, run.code, check.StatusIncomplete, check.ExitIncomplete)
	}
	pods := result(r, check.IDWebhookPods)
	if !strings.Contains(pods.Message, "forbidden") || !strings.Contains(pods.Message, "system:serviceaccount:"+stack.Namespace+":"+stack.SyncerServiceAccount) {
		t.Errorf("%s message %q, want the ServiceAccount's forbidden list", check.IDWebhookPods, pods.Message)
	}
	if !strings.Contains(pods.Remediation, "Run check with a kubeconfig that may list Pods") {
		t.Errorf("%s remediation %q, want how to include the item", check.IDWebhookPods, pods.Remediation)
	}
	if lease := result(r, check.IDSyncerLease); !strings.Contains(lease.Message, "was not looked at: these credentials may not get Pods") {
		t.Errorf("%s message %q, want it to say that the holder's Pod was not looked at", check.IDSyncerLease, lease.Message)
	}
}
