package manifests

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
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
