package manifests

import (
	"maps"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// plainRuntime is a kube-apiserver as a Kyma runtime serves it before any
// module: the API groups of Kubernetes, and the CRDs of Gardener
// cert-management, which Gardener installs on every shoot, and so on every
// Kyma runtime. It has no prometheus-operator.
type plainRuntime struct {
	env *apiEnv
	// groups are the API groups kube-apiserver serves alone, read from its
	// discovery before any CRD, and cert.gardener.cloud.
	groups map[string]bool
	// versions are the group versions it serves, cert.gardener.cloud's
	// among them.
	versions map[string]bool
}

// startPlainRuntime starts a control plane of its own for t, since the
// package's shared one serves prometheus-operator's CRDs, with
// kyma-system, which Kyma creates.
func startPlainRuntime(t *testing.T) *plainRuntime {
	t.Helper()
	c := framework.Integration(t, framework.Options{},
		"needs a control plane of its own, without prometheus-operator's CRDs")
	env, err := newAPIEnv(c)
	if err != nil {
		t.Fatal(err)
	}
	rt := &plainRuntime{env: env, groups: map[string]bool{}}
	for g := range rt.served(t) {
		rt.groups[g] = true
	}
	if rt.groups["monitoring.coreos.com"] || rt.groups["cert.gardener.cloud"] {
		t.Fatalf("kube-apiserver alone serves the groups %v", slices.Sorted(maps.Keys(rt.groups)))
	}
	if err := env.installCRDs(t.Context(), "cert.gardener.cloud_*.yaml"); err != nil {
		t.Fatal(err)
	}
	rt.groups["cert.gardener.cloud"] = true
	rt.versions = map[string]bool{}
	for _, gvs := range rt.served(t) {
		for _, gv := range gvs {
			rt.versions[gv] = true
		}
	}
	env.namespace(t, namespace, nil)
	return rt
}

// served returns the group versions the API server serves, by group; the
// core group is "".
func (rt *plainRuntime) served(t *testing.T) map[string][]string {
	t.Helper()
	list, err := rt.env.cs.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, g := range list.Groups {
		for _, v := range g.Versions {
			out[g.Name] = append(out[g.Name], v.GroupVersion)
		}
	}
	return out
}

// checkGroupsServed: lifecycle-manager fails a module's whole manifest when
// the runtime has no CRD for one of its objects.
func checkGroupsServed(t *testing.T, rt *plainRuntime, module []*unstructured.Unstructured) {
	for _, o := range module {
		if g := o.GroupVersionKind().Group; !rt.groups[g] || !rt.versions[o.GetAPIVersion()] {
			t.Errorf("%s is of %s, which a plain runtime does not serve: lifecycle-manager would fail the whole module",
				id(o), o.GetAPIVersion())
		}
	}
}

// checkAppliesToPlainRuntime applies module.yaml to the plain runtime,
// server-side and for real, in the order of the file, as lifecycle-manager
// applies a manifest. The objects of monitoring.yaml find no kind there,
// which shows that the runtime lacks what the module must not need.
func checkAppliesToPlainRuntime(t *testing.T, rt *plainRuntime, m *moduleRelease) {
	for _, o := range m.module {
		if err := rt.env.apply(t.Context(), o, false); err != nil {
			t.Errorf("apply %s: %v", id(o), err)
		}
	}
	for _, o := range m.monitoring {
		if err := rt.env.apply(t.Context(), o, true); !meta.IsNoMatchError(err) {
			t.Errorf("%s on the plain runtime: %v; want no kind to match: the check above proves nothing", id(o), err)
		}
	}
}

// Each bridge version applies to a plain runtime, server-side, on the
// version before it, as lifecycle-manager takes a runtime from kim-snatch
// 1.0.16 through the bridge versions to the module and back: it deletes
// what the earlier version has and the later lacks, then applies every
// object of the later (docs/releasing.md, "The bridge versions"). After
// each step the runtime holds the version's objects and its one
// configuration's entries, the API server having accepted the inert
// entry's condition.
func TestModuleBridgeVersionsApplyToAPlainRuntime(t *testing.T) {
	r := bridgeReleaser(t)
	c := renderBridges(t, r, kimSnatchManifest(t, withoutCRDs))
	rt := startPlainRuntime(t)
	order := make([]int, 0, 2*len(c.versions))
	for i := range c.versions {
		order = append(order, i)
	}
	for i := len(c.versions) - 2; i >= 0; i-- {
		order = append(order, i)
	}
	var prev []*unstructured.Unstructured
	for k, i := range order {
		step := c.names[i]
		if k > 0 {
			step = c.names[order[k-1]] + "_to_" + step
		}
		ok := t.Run(step, func(t *testing.T) {
			checkGroupsServed(t, rt, c.versions[i])
			checkStepOnPlainRuntime(t, rt, prev, c.versions[i])
		})
		if !ok {
			t.FailNow()
		}
		prev = c.versions[i]
	}
}

// checkStepOnPlainRuntime deletes the objects of from that to lacks,
// applies to, and reads back its objects and its configuration's entries.
func checkStepOnPlainRuntime(t *testing.T, rt *plainRuntime, from, to []*unstructured.Unstructured) {
	ctx := t.Context()
	for _, o := range from {
		if pruned(from, to).Has(id(o)) {
			res, err := rt.env.resource(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("prune %s: %v", id(o), err)
			}
		}
	}
	for _, o := range to {
		if err := rt.env.apply(ctx, o, false); err != nil {
			t.Errorf("apply %s: %v", id(o), err)
		}
	}
	var mwc *unstructured.Unstructured
	for _, o := range to {
		res, err := rt.env.resource(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Errorf("read %s back: %v", id(o), err)
			continue
		}
		if o.GetKind() == "MutatingWebhookConfiguration" {
			mwc = got
		}
	}
	if mwc == nil {
		t.Fatal("no MutatingWebhookConfiguration on the runtime")
	}
	want, wantNames := entries(t, to)
	got, gotNames := entries(t, []*unstructured.Unstructured{mwc})
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("the runtime's configuration has the entries %v, want %v", gotNames, wantNames)
	}
	for _, name := range wantNames {
		if inert(got[name]) != inert(want[name]) {
			t.Errorf("the runtime's entry %s is inert: %v, want %v", name, inert(got[name]), inert(want[name]))
		}
	}
}
