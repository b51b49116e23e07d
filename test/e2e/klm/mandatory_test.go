package klm_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
)

// manifests are the stand-in's Manifests in the control plane.
var manifests = schema.GroupVersionResource{Group: klm.Group, Version: klm.Version, Resource: "manifests"}

// A ModuleReleaseMeta pins its mandatory module's Manifests: a new version
// reaches the Manifest and the runtime, a version without its template
// only once the template exists, and a hand-edited version goes back to
// the pin.
func releaseMetaPinsVersion(t *testing.T, e *env) {
	f := e.start(t, fast())
	for _, v := range []string{"1", "2"} {
		f.publish(v, configMap(f.skr, "a", map[string]string{"v": v}))
	}
	f.create("1", map[string]string{klm.ModuleNameLabel: f.module, klm.MandatoryModuleLabel: "true"})
	f.waitReady("1")
	mrm := &klm.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.kcp, Name: f.module},
		Spec:       klm.ModuleReleaseMetaSpec{Mandatory: &klm.Mandatory{Version: "1"}},
	}
	must(t, f.cl.Create(t.Context(), mrm))
	f.pin(mrm, "2")
	f.waitReady("2")
	if v := data(f.get(configMaps, f.skr, "a"), "v"); v != "2" {
		t.Errorf("ConfigMap a holds v=%q, want version 2's", v)
	}
	r := f.record(f.kcp, manifests, configMaps)
	f.pin(mrm, "3")
	f.publish("3", configMap(f.skr, "a", map[string]string{"v": "3"}))
	f.waitReady("3")
	template := f.event(r, "template 3 added", is("ConfigMap", klm.TemplateName(f.module, "3"), watch.Added))
	pinned := f.event(r, "Manifest at 3", func(c change) bool { return c.kind == "Manifest" && c.version == "3" })
	before(t, template, pinned)
	f.bump("1")
	f.waitManifest("version 3 again", func(m *klm.Manifest) bool { return m.Spec.Version == "3" })
}

// pin sets the ModuleReleaseMeta's mandatory version.
func (f *fixture) pin(mrm *klm.ModuleReleaseMeta, version string) {
	f.t.Helper()
	p := client.MergeFrom(mrm.DeepCopy())
	mrm.Spec.Mandatory.Version = version
	must(f.t, f.cl.Patch(f.t.Context(), mrm, p))
}
