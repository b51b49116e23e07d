package klm_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
)

// The state is the first Deployment's alone: without conditions it is
// Error, an available second Deployment does not change that, and once the
// first is available the Manifest is Ready though the second is not.
func stateFollowsFirstDeployment(t *testing.T, e *env) {
	iv := fast()
	iv.Success = 200 * time.Millisecond // so that a wrong Ready does not stop the passes the test waits for
	f := e.start(t, iv)
	f.publish("1", deployment(f.skr, "first", "example.org/a:1", "example.org/a:1"),
		deployment(f.skr, "second", "example.org/b:1", "example.org/b:1"))
	f.create("1", nil)
	f.waitManifest("Error, as the first Deployment has no conditions", func(m *klm.Manifest) bool {
		return m.Status.State == klm.StateError
	})
	f.markAvailable("second")
	f.waitPasses(3)
	if m := f.manifest(); m.Status.State != klm.StateError {
		t.Errorf("with only the second Deployment available the state is %s, want Error", m.Status.State)
	}
	f.setConditions("second", nil)
	f.markAvailable("first")
	f.waitReady("1")
	d, err := f.cs.AppsV1().Deployments(f.skr).Get(t.Context(), "second", metav1.GetOptions{})
	must(t, err)
	if len(d.Status.Conditions) != 0 {
		t.Errorf("the second Deployment has conditions %v, want none", d.Status.Conditions)
	}
}

// setConditions writes a Deployment's status conditions.
func (f *fixture) setConditions(name string, conds []appsv1.DeploymentCondition) {
	f.t.Helper()
	must(f.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := f.cs.AppsV1().Deployments(f.skr).Get(f.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Status.Conditions = conds
		_, err = f.cs.AppsV1().Deployments(f.skr).UpdateStatus(f.t.Context(), d, metav1.UpdateOptions{})
		return err
	}))
}
