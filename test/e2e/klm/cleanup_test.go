package klm_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// holdFinalizer is the test's own finalizer, which keeps an object
// terminating until the test lets it go.
const holdFinalizer = "test.klm.test.kim-snatch.kyma-project.io/hold"

// Of a dropped layer, the ConfigMap and Secret go first; the Service and
// Deployment stay, untouched, through every reconcile while a ConfigMap is
// still terminating, and the new layer waits for both phases.
func operatorKindsOutliveTheRest(t *testing.T, e *env) {
	f := e.start(t, fast())
	f.publish("1", configMap(f.skr, "cfg", nil), secret(f.skr, "sec"), service(f.skr, "svc"),
		deployment(f.skr, "dep", "example.org/op:1", "example.org/op:1"))
	f.publish("2", configMap(f.skr, "new", nil))
	f.create("1", nil)
	f.waitObject(deployments, "dep")
	f.markAvailable("dep")
	f.waitReady("1")
	f.setFinalizers(configMaps, "cfg", []string{holdFinalizer})
	r := f.record(f.skr, configMaps, secrets, services, deployments)
	f.bump("2")
	f.waitObjectWhere(configMaps, "cfg", "terminating", func(u *unstructured.Unstructured) bool {
		return u.GetDeletionTimestamp() != nil
	})
	f.waitPasses(3)
	checkSecondPhaseWaits(t, f)
	f.setFinalizers(configMaps, "cfg", nil)
	f.waitReady("2")
	cfg := f.event(r, "cfg deleted", is("ConfigMap", "cfg", watch.Deleted))
	added := f.event(r, "new added", is("ConfigMap", "new", watch.Added))
	for kind, name := range map[string]string{"Service": "svc", "Deployment": "dep"} {
		gone := f.event(r, name+" deleted", is(kind, name, watch.Deleted))
		before(t, cfg, gone)
		before(t, gone, added)
	}
}

// checkSecondPhaseWaits checks the runtime while the first phase is held
// open: its Secret is gone, the second phase's objects are not even being
// deleted, and the new layer is not applied.
func checkSecondPhaseWaits(t *testing.T, f *fixture) {
	t.Helper()
	if f.get(secrets, f.skr, "sec") != nil {
		t.Error("Secret sec, of the first phase, is still there")
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{services, "svc"}, {deployments, "dep"}} {
		if u := f.get(o.gvr, f.skr, o.name); u == nil || u.GetDeletionTimestamp() != nil {
			t.Errorf("%s %s was deleted while the first phase still held ConfigMap cfg", o.gvr.Resource, o.name)
		}
	}
	if f.get(configMaps, f.skr, "new") != nil {
		t.Error("ConfigMap new of version 2 was applied before the prune had finished")
	}
}

// A deleted Manifest prunes everything it applied, in two phases: the
// Service outlives a terminating ConfigMap, and the finalizer goes last.
func deletedManifestPrunes(t *testing.T, e *env) {
	f := e.start(t, fast())
	f.publish("1", configMap(f.skr, "cfg", nil), service(f.skr, "svc"))
	f.create("1", nil)
	if m := f.waitReady("1"); !controllerutil.ContainsFinalizer(m, klm.Finalizer) {
		t.Errorf("the Manifest lacks the finalizer %s: %v", klm.Finalizer, m.Finalizers)
	}
	f.setFinalizers(configMaps, "cfg", []string{holdFinalizer})
	r := f.record(f.skr, configMaps, services)
	must(t, f.cl.Delete(t.Context(), f.manifest()))
	f.waitObjectWhere(configMaps, "cfg", "terminating", func(u *unstructured.Unstructured) bool {
		return u.GetDeletionTimestamp() != nil
	})
	f.waitPasses(3)
	if u := f.get(services, f.skr, "svc"); u == nil || u.GetDeletionTimestamp() != nil {
		t.Error("Service svc was deleted while the first phase still held ConfigMap cfg")
	}
	if m := f.manifest(); !controllerutil.ContainsFinalizer(m, klm.Finalizer) {
		t.Error("the Manifest let go of its finalizer before its objects were gone")
	}
	f.setFinalizers(configMaps, "cfg", nil)
	poll.Eventually(t, "the Manifest gone", func(ctx context.Context) error {
		m := &klm.Manifest{}
		switch err := f.cl.Get(ctx, f.key, m); {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return poll.Stop(err)
		}
		return fmt.Errorf("the Manifest is there, finalizers %v", m.Finalizers)
	}, poll.Timeout(waitTimeout))
	if f.get(configMaps, f.skr, "cfg") != nil || f.get(services, f.skr, "svc") != nil {
		t.Error("the Manifest is gone, but not all of its objects")
	}
	cfg := f.event(r, "cfg deleted", is("ConfigMap", "cfg", watch.Deleted))
	svc := f.event(r, "svc deleted", is("Service", "svc", watch.Deleted))
	before(t, cfg, svc)
}

// setFinalizers sets the finalizers of the runtime's object.
func (f *fixture) setFinalizers(gvr schema.GroupVersionResource, name string, finalizers []string) {
	f.t.Helper()
	u := f.get(gvr, f.skr, name)
	if u == nil {
		f.t.Fatalf("%s %s is not there", gvr.Resource, name)
	}
	u.SetFinalizers(finalizers)
	_, err := f.dyn.Resource(gvr).Namespace(f.skr).Update(f.t.Context(), u, metav1.UpdateOptions{})
	must(f.t, err)
}

// waitObject waits until the runtime holds the object.
func (f *fixture) waitObject(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	f.t.Helper()
	return f.waitObjectWhere(gvr, name, "created", func(*unstructured.Unstructured) bool { return true })
}

// waitObjectWhere waits until the runtime's object exists and ok holds.
func (f *fixture) waitObjectWhere(gvr schema.GroupVersionResource, name, what string,
	ok func(*unstructured.Unstructured) bool,
) *unstructured.Unstructured {
	f.t.Helper()
	var u *unstructured.Unstructured
	key := types.NamespacedName{Namespace: f.skr, Name: name}
	poll.Eventually(f.t, gvr.Resource+" "+key.String()+" "+what, func(ctx context.Context) error {
		var err error
		u, err = f.dyn.Resource(gvr).Namespace(f.skr).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return err
		case err != nil:
			return poll.Stop(err)
		case !ok(u):
			return fmt.Errorf("it is there, not %s", what)
		}
		return nil
	}, poll.Timeout(waitTimeout))
	return u
}
