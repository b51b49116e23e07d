package check_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// disableAndRestore runs the documented emergency disable and its restore
// against a real API server (docs/operations.md, "Emergency disable and
// restore"): under the disable, webhook-configuration and admission warn
// and the items that need the MWC skip; with the MWC back and the marker
// still there, webhook-configuration warns; with the marker gone, the
// report is healthy again but for noWebhook.
func disableAndRestore(t *testing.T, cs kubernetes.Interface, in *checktest.Install, run func(*testing.T) check.Report,
	ids []string, noWebhook map[string]check.Status) {
	ctx := context.Background()
	configMaps := cs.CoreV1().ConfigMaps(itNamespace)
	mwcs := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	_, err := configMaps.Create(ctx, syncertest.DisableMarker(itNamespace, syncer.EmergencyDisableName,
		disableReason, "oncall@example.com"), metav1.CreateOptions{})
	must(t, err)
	must(t, mwcs.Delete(ctx, itMWC, metav1.DeleteOptions{}))

	disabled := run(t)
	assertReport(t, disabled, ids, map[string]check.Status{
		check.IDWebhookConfiguration: check.StatusWarn, check.IDAdmission: check.StatusWarn,
		check.IDCABundle: check.StatusSkip, check.IDNamespace: check.StatusSkip,
		check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip,
	})
	if disabled.ExitCode() != check.ExitIncomplete {
		t.Errorf("under the disable: exit code %d, want %d", disabled.ExitCode(), check.ExitIncomplete)
	}
	logItems(t, disabled, check.IDWebhookConfiguration, check.IDAdmission)

	_, err = mwcs.Create(ctx, in.MWC.DeepCopy(), metav1.CreateOptions{})
	must(t, err)
	restored := run(t)
	assertReport(t, restored, ids, map[string]check.Status{
		check.IDWebhookConfiguration: check.StatusWarn, check.IDAdmission: check.StatusFail,
	})
	logItems(t, restored, check.IDWebhookConfiguration)

	must(t, configMaps.Delete(ctx, syncer.EmergencyDisableName, metav1.DeleteOptions{}))
	assertReport(t, run(t), ids, noWebhook)
}

// logItems logs the results of the items ids.
func logItems(t *testing.T, report check.Report, ids ...string) {
	t.Helper()
	for _, r := range report.Checks {
		for _, id := range ids {
			if r.ID == id {
				t.Logf("%s %s: %s\n  → %s", r.ID, r.Status, r.Message, r.Remediation)
			}
		}
	}
}
