package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// docsTargetNamespace is the namespace docs/operations.md passes to
// --target-namespace; a Kyma-managed namespace in every Kyma cluster.
const docsTargetNamespace = "istio-system"

// checkIDs are the items of a report in their order; namespace only with
// --target-namespace.
func checkIDs(withNamespace bool) []string {
	ids := []string{
		check.IDWebhookPods, check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDCABundle,
		check.IDWebhookEndpoints, check.IDServedCertificate, check.IDAdmission, check.IDKymaPool, check.IDPlacement,
	}
	if withNamespace {
		ids = append(ids, check.IDNamespace)
	}
	return ids
}

// An operator's first command on a healthy installation: every item
// passes, in the table and in JSON, run as docs/operations.md quotes it.
func TestCheckPassesOnAHealthyInstallation(t *testing.T) {
	framework.InTier(t, framework.Smoke, "the operators' checklist on the installation as shipped, once")
	framework.Shares(t)
	c := newChecker(t)
	targetNamespace(t)

	// docs/operations.md: bin/cabundle-syncer check --kubeconfig ~/.kube/config
	run := c.run(t, nil, "--kubeconfig", sys.KubeconfigPath())
	logf("check on a healthy installation (%s):\n%s", run.took.Round(time.Millisecond), run.stdout)
	assertTable(t, run, nil)

	fp := secretCAFingerprint(t)

	// docs/operations.md: check -o json, and check --target-namespace istio-system
	run, r := c.report(t, nil, "--kubeconfig", sys.KubeconfigPath(), "--target-namespace", docsTargetNamespace, "-o", "json")
	assertReport(t, run, r, nil)
	messages := map[string]string{
		check.IDWebhookPods: fmt.Sprintf("%d of %d webhook Pods ready in %s", sys.WebhookReplicas(), sys.WebhookReplicas(), stack.Namespace),
		check.IDSyncerLease: "held by " + stack.SyncerName + "-",
		check.IDCASecret:    fmt.Sprintf("Secret %s/%s key ca.crt: CA", stack.Namespace, stack.SecretName),
		check.IDCABundle:    "the 1 entry of " + stack.WebhookConfigName + " trusts the CA sha256 " + fp[:16],
		check.IDNamespace:   "Pods created in " + docsTargetNamespace + " are sent to the webhook (entries: " + stack.WebhookEntryName + ")",
		check.IDWebhookEndpoints: fmt.Sprintf("entry %s → Service %s/%s port 443 path /mutate-pod: %d ready endpoints",
			stack.WebhookEntryName, stack.Namespace, stack.ServiceName, sys.WebhookReplicas()),
		check.IDServedCertificate: fmt.Sprintf("%d endpoints serve certificates that verify for %s.%s.svc against the caBundle",
			sys.WebhookReplicas(), stack.ServiceName, stack.Namespace),
		check.IDPlacement: "all carry the term, and all bound ones run on pool " + framework.KymaPool,
	}
	for _, res := range r.Checks {
		if want, ok := messages[res.ID]; ok && !strings.Contains(res.Message, want) {
			t.Errorf("%s message %q, want it to contain %q", res.ID, res.Message, want)
		}
	}
	if lease := result(r, check.IDSyncerLease); !strings.HasSuffix(lease.Message, " is Running") {
		t.Errorf("syncer-lease message %q, want the leader's Pod named and Running", lease.Message)
	}
	if watch := newAlertWatch(t); watch != nil {
		watch.assertNone(t, "healthy installation")
		watch.table()
	}
}

// targetNamespace creates the Kyma-managed namespace the docs pass to
// --target-namespace, and removes it when t ends. Its name is the docs',
// so only one test at a time may use it: those that do run alone, or are
// the only one among those that share the installation.
func targetNamespace(t *testing.T) {
	t.Helper()
	if err := stack.CreateNamespace(t.Context(), sys.Clientset(), docsTargetNamespace, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := framework.DeleteNamespace(context.Background(), sys.Clientset(), docsTargetNamespace); err != nil {
			t.Error(err)
		}
	})
}
