package manifests

import (
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// Between two consecutive versions of the chain kim-snatch 1.0.16,
// bridge-1 .. bridge-5, module, lifecycle-manager prunes, before it
// applies the later version, each object of the earlier that the later
// lacks (docs/releasing.md, "The bridge versions"). Each step, forward and
// back, prunes exactly what the design says, and never what routes a
// webhook call in the earlier version. From kim-snatch's manifest with its
// CRDs, no step up to bridge-5 prunes one.
func TestModuleBridgeStepsPruneOnlyWhatTheDesignSays(t *testing.T) {
	r := bridgeReleaser(t)
	c := renderBridges(t, r, kimSnatchManifest(t, withoutCRDs))
	kimSnatch := sets.New(ids(c.kimSnatch)...)
	binary := sets.New(oldBinary...)
	part := func(b string) sets.Set[string] { return sets.New(ids(without(c.install[b], isMonitoring))...) }
	// Forward, step i prunes forward[i] of versions[i]; back, backward[i]
	// of versions[i+1].
	forward := []sets.Set[string]{
		sets.New[string](), // the syncer is added, nothing routes differently
		sets.New[string](), // names and the webhook are added
		sets.New[string](), // a selector flips
		binary,             // kim-snatch's binary goes, an inert entry is added
		sets.New[string](), // the inert condition moves
		// Svc_old, C_old and kim-snatch's leftovers; the configuration
		// stays, by its name.
		kimSnatch.Difference(binary).Delete(mwcID),
	}
	backward := []sets.Set[string]{
		part("cabundle-syncer"), // the syncer's objects
		// the webhook's objects; C_old loses its names
		part("snatch-webhook").Delete(mwcID, newCertificateID),
		sets.New[string](),
		sets.New[string](), // kim-snatch's binary comes back
		sets.New[string](),
		sets.New(newCertificateID), // C_old writes the Secret again, alone
	}
	if !forward[5].HasAll(oldServiceID, oldCertificateID) {
		t.Fatalf("the design's prune of bridge-5 to the module misses %s or %s: %v",
			oldServiceID, oldCertificateID, sets.List(forward[5]))
	}
	for i := range len(c.versions) - 1 {
		from, to := c.versions[i], c.versions[i+1]
		t.Run(c.names[i]+"_to_"+c.names[i+1], func(t *testing.T) {
			checkPruned(t, from, to, forward[i])
			checkRoutingKept(t, from, to)
		})
		t.Run(c.names[i+1]+"_to_"+c.names[i], func(t *testing.T) {
			checkPruned(t, to, from, backward[i])
			checkRoutingKept(t, to, from)
		})
	}

	t.Run("kim-snatch_crds_are_never_pruned", func(t *testing.T) {
		c := renderBridges(t, r, filepath.Join(tools.MustRepoRoot(t), kimSnatchTestdata))
		crds := objects.OfKind(c.kimSnatch, "CustomResourceDefinition")
		if len(crds) == 0 {
			t.Fatal("the test's kim-snatch manifest has no CRD; this proves nothing")
		}
		for i := 1; i <= 5; i++ {
			for _, pruned := range sets.List(pruned(c.versions[i-1], c.versions[i])) {
				if slices.Contains(ids(crds), pruned) {
					t.Errorf("%s to %s prunes %s", c.names[i-1], c.names[i], pruned)
				}
			}
		}
	})
}

// pruned returns what lifecycle-manager prunes going from one manifest to
// the next: the objects of from that to lacks, by group, kind, namespace
// and name.
func pruned(from, to []*unstructured.Unstructured) sets.Set[string] {
	return sets.New(ids(from)...).Difference(sets.New(ids(to)...))
}

func checkPruned(t *testing.T, from, to []*unstructured.Unstructured, want sets.Set[string]) {
	t.Helper()
	if got := pruned(from, to); !got.Equal(want) {
		t.Errorf("lifecycle-manager would prune\n  %v\nwant\n  %v", sets.List(got), sets.List(want))
	}
}

// checkRoutingKept: for each active entry of from's configuration, the
// Service it calls and the Deployments that Service selects in from are
// in to, so that lifecycle-manager's prune, which comes before its apply,
// leaves each call a Service and Pods.
func checkRoutingKept(t *testing.T, from, to []*unstructured.Unstructured) {
	t.Helper()
	kept := sets.New(ids(to)...)
	hooks, names := entries(t, from)
	for _, name := range names {
		if inert(hooks[name]) {
			continue
		}
		svcName, _, _ := unstructured.NestedString(hooks[name], "clientConfig", "service", "name")
		svcNamespace, _, _ := unstructured.NestedString(hooks[name], "clientConfig", "service", "namespace")
		svc := findIn(from, "Service", svcNamespace, svcName)
		if svc == nil {
			t.Errorf("the active entry %s calls the Service %s/%s, which the version lacks", name, svcNamespace, svcName)
			continue
		}
		if !kept.Has(id(svc)) {
			t.Errorf("the active entry %s calls %s, which the next version prunes", name, id(svc))
		}
		selector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
		var selected int
		for _, d := range objects.OfKind(from, "Deployment") {
			pods, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
			if !labels.SelectorFromSet(selector).Matches(labels.Set(pods)) {
				continue
			}
			selected++
			if !kept.Has(id(d)) {
				t.Errorf("the active entry %s calls %s, whose Pods %s runs; the next version prunes it", name, id(svc), id(d))
			}
		}
		if selected == 0 {
			t.Errorf("the active entry %s calls %s, which selects no Deployment's Pods", name, id(svc))
		}
	}
}

// findIn returns the object of kind, namespace and name in objs, or nil.
func findIn(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}
