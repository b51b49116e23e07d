package klm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// A Manifest labelled skip-reconciliation leaves the runtime as it is,
// through a version bump and a drift, and its status too; without the
// label it converges again.
func skipLeavesRuntimeUntouched(t *testing.T, e *env) {
	iv := fast()
	iv.Success = 200 * time.Millisecond // a skipped Manifest is requeued after Success
	f := e.start(t, iv)
	f.publish("1", configMap(f.skr, "a", map[string]string{"v": "1"}))
	f.publish("2", configMap(f.skr, "b", map[string]string{"v": "2"}))
	f.create("1", nil)
	ready := f.waitReady("1")
	f.patch(func(m *klm.Manifest) {
		m.Labels = map[string]string{klm.SkipReconciliationLabel: "true"}
		m.Spec.Version = "2"
	})
	f.drift("a")
	f.waitPasses(3)
	if v := data(f.get(configMaps, f.skr, "a"), "v"); v != "drift" {
		t.Errorf("ConfigMap a holds v=%q, want the drift kept", v)
	}
	if f.get(configMaps, f.skr, "b") != nil {
		t.Error("ConfigMap b of version 2 was applied to a skipped Manifest")
	}
	if m := f.manifest(); m.Status.State != ready.Status.State || m.Status.ObservedVersion != "1" {
		t.Errorf("the skipped Manifest's status changed to %+v", m.Status)
	}
	f.patch(func(m *klm.Manifest) { delete(m.Labels, klm.SkipReconciliationLabel) })
	f.waitReady("2")
	if f.get(configMaps, f.skr, "a") != nil || f.get(configMaps, f.skr, "b") == nil {
		t.Error("without the label the runtime did not converge to version 2")
	}
}

// A Ready Manifest is applied again after the success interval, with no
// change of its own: a drift of the runtime is reverted.
func readyRequeued(t *testing.T, e *env) {
	iv := fast()
	iv.Success = 300 * time.Millisecond
	f := e.start(t, iv)
	f.publish("1", configMap(f.skr, "a", map[string]string{"v": "1"}))
	f.create("1", nil)
	ready := f.waitReady("1")
	f.drift("a")
	poll.Eventually(t, "the drift reverted", func(context.Context) error {
		if v := data(f.get(configMaps, f.skr, "a"), "v"); v != "1" {
			return fmt.Errorf("v=%s", v)
		}
		return nil
	}, poll.Timeout(waitTimeout))
	if m := f.manifest(); m.ResourceVersion != ready.ResourceVersion {
		t.Errorf("the Manifest changed (resourceVersion %s to %s): its watch, not the requeue, may have reverted the drift",
			ready.ResourceVersion, m.ResourceVersion)
	}
}

// drift sets data.v of the runtime's ConfigMap to "drift", as someone
// editing it by hand.
func (f *fixture) drift(name string) {
	f.t.Helper()
	must(f.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := f.cs.CoreV1().ConfigMaps(f.skr).Get(f.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["v"] = "drift"
		_, err = f.cs.CoreV1().ConfigMaps(f.skr).Update(f.t.Context(), cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	}))
}
