package klm_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
)

// data returns obj's data[key], or "" when obj is nil.
func data(obj *unstructured.Unstructured, key string) string {
	if obj == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "data", key)
	return v
}

func cmResource(ns, name string) klm.Resource {
	return klm.Resource{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
}

// A version bump prunes what the new layer lacks, applies the new layer,
// and records it as synced, ending Ready at the new version.
func versionBumpConverges(t *testing.T, e *env) {
	f := e.start(t, fast())
	v1, v2 := map[string]string{"v": "1"}, map[string]string{"v": "2"}
	f.publish("1.0.0", configMap(f.skr, "a", v1), configMap(f.skr, "b", v1))
	f.publish("1.1.0", configMap(f.skr, "b", v2), configMap(f.skr, "c", v2))
	f.create("1.0.0", nil)
	m := f.waitReady("1.0.0")
	if want := []klm.Resource{cmResource(f.skr, "a"), cmResource(f.skr, "b")}; !slices.Equal(m.Status.Synced, want) {
		t.Errorf("synced at 1.0.0 = %v, want %v", m.Status.Synced, want)
	}
	f.bump("1.1.0")
	m = f.waitReady("1.1.0")
	if f.get(configMaps, f.skr, "a") != nil {
		t.Error("ConfigMap a, which 1.1.0 dropped, is still there")
	}
	if v := data(f.get(configMaps, f.skr, "b"), "v"); v != "2" {
		t.Errorf("ConfigMap b holds v=%q, want 1.1.0's 2", v)
	}
	if v := data(f.get(configMaps, f.skr, "c"), "v"); v != "2" {
		t.Errorf("ConfigMap c holds v=%q, want 1.1.0's 2", v)
	}
	if want := []klm.Resource{cmResource(f.skr, "b"), cmResource(f.skr, "c")}; !slices.Equal(m.Status.Synced, want) {
		t.Errorf("synced at 1.1.0 = %v, want %v", m.Status.Synced, want)
	}
}

// The prune runs before the apply: the object the new layer drops is
// deleted before the object it adds is created.
func droppedObjectDeletedBeforeApply(t *testing.T, e *env) {
	f := e.start(t, fast())
	f.publish("1", configMap(f.skr, "old", nil), configMap(f.skr, "kept", nil))
	f.publish("2", configMap(f.skr, "kept", nil), configMap(f.skr, "new", nil))
	f.create("1", nil)
	f.waitReady("1")
	r := f.record(f.skr, configMaps)
	f.bump("2")
	f.waitReady("2")
	gone := f.event(r, "old deleted", is("ConfigMap", "old", watch.Deleted))
	added := f.event(r, "new added", is("ConfigMap", "new", watch.Added))
	before(t, gone, added)
}

// An object whose apiVersion changes is another identity: it is deleted
// through the old version and created anew, with a new UID.
func changedAPIVersionRecreates(t *testing.T, e *env) {
	f := e.start(t, fast())
	f.publish("1", hpa(f.skr, "scaler", "autoscaling/v1"))
	f.publish("2", hpa(f.skr, "scaler", "autoscaling/v2"))
	f.create("1", nil)
	f.waitReady("1")
	old := f.get(hpasV2, f.skr, "scaler").GetUID()
	f.bump("2")
	m := f.waitReady("2")
	if now := f.get(hpasV2, f.skr, "scaler"); now == nil || now.GetUID() == old {
		t.Errorf("HorizontalPodAutoscaler scaler was not created anew: UID %v before, object after: %v", old, now)
	}
	want := []klm.Resource{
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler", Namespace: f.skr, Name: "scaler"},
	}
	if !slices.Equal(m.Status.Synced, want) {
		t.Errorf("synced = %v, want %v", m.Status.Synced, want)
	}
}

// A layer that changes without a version change is not pruned: the state
// turns Warning and the object stays, until a version bump prunes it.
func sameVersionDiffNotPruned(t *testing.T, e *env) {
	iv := fast()
	iv.Success = 200 * time.Millisecond // the edited template is read on the next periodic reconcile
	f := e.start(t, iv)
	f.publish("1", configMap(f.skr, "a", nil), configMap(f.skr, "b", nil))
	f.create("1", nil)
	f.waitReady("1")
	f.publish("1", configMap(f.skr, "a", nil))
	f.waitManifest("Warning", func(m *klm.Manifest) bool { return m.Status.State == klm.StateWarning })
	if f.get(configMaps, f.skr, "b") == nil {
		t.Error("ConfigMap b was pruned though the version did not change")
	}
	f.publish("2", configMap(f.skr, "a", nil))
	f.bump("2")
	f.waitReady("2")
	if f.get(configMaps, f.skr, "b") != nil {
		t.Error("ConfigMap b is still there after the bump to 2, which lacks it")
	}
}

// The Namespace kyma-system survives a layer that drops it.
func remoteNamespaceNotPruned(t *testing.T, e *env) {
	f := e.start(t, fast())
	ns := doc("v1", "Namespace", "", klm.RemoteNamespace, nil)
	f.publish("1", ns, configMap(f.skr, "a", nil))
	f.publish("2", configMap(f.skr, "a", nil))
	f.create("1", nil)
	f.waitReady("1")
	f.bump("2")
	f.waitReady("2")
	if got := f.get(namespaces, "", klm.RemoteNamespace); got == nil || got.GetDeletionTimestamp() != nil {
		t.Errorf("Namespace %s was pruned: %v", klm.RemoteNamespace, got)
	}
}
