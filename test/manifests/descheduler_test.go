package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const deschedulerExample = "deploy/examples/descheduler"

// deschedulerPolicyTool returns the checker built from
// hack/tools/descheduler-policy, which compiles the descheduler.
func deschedulerPolicyTool(t *testing.T) string {
	t.Helper()
	return tools.DeschedulerPolicy.Path(t)
}

// deschedulerPolicy is what the checker prints for one file.
type deschedulerPolicy struct {
	File     string               `json:"file"`
	Profiles []deschedulerProfile `json:"profiles"`
}

// deschedulerProfile is one profile of a policy.
type deschedulerProfile struct {
	Name    string                     `json:"name"`
	Enabled map[string][]string        `json:"enabled"`
	Args    map[string]json.RawMessage `json:"args"`
}

// examplePolicyProfile runs the checker on the example policy and returns
// its one profile.
func examplePolicyProfile(t *testing.T) deschedulerProfile {
	t.Helper()
	tool := deschedulerPolicyTool(t)
	path := filepath.Join(tools.MustRepoRoot(t), deschedulerExample, "policy.yaml")
	out := process.Run(t, tool, path)
	var policies []deschedulerPolicy
	if err := json.Unmarshal([]byte(out), &policies); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if len(policies) != 1 || len(policies[0].Profiles) != 1 {
		t.Fatalf("want one policy with one profile, got %s", out)
	}
	return policies[0].Profiles[0]
}

// exampleEvictorNamespaces checks the example's DefaultEvictor args and
// returns the selector of the namespaces where it evicts.
func exampleEvictorNamespaces(t *testing.T, args json.RawMessage) labels.Selector {
	t.Helper()
	var evictor struct {
		NamespaceLabelSelector *metav1.LabelSelector `json:"namespaceLabelSelector"`
		NodeFit                bool                  `json:"nodeFit"`
		PodProtections         struct {
			DefaultDisabled []string `json:"defaultDisabled"`
		} `json:"podProtections"`
	}
	if err := json.Unmarshal(args, &evictor); err != nil {
		t.Fatal(err)
	}
	if !evictor.NodeFit {
		t.Error("DefaultEvictor.nodeFit is off: Pods that fit nowhere else would be evicted in vain")
	}
	if len(evictor.PodProtections.DefaultDisabled) > 0 {
		t.Errorf("DefaultEvictor disables default protections %v", evictor.PodProtections.DefaultDisabled)
	}
	sel, err := metav1.LabelSelectorAsSelector(evictor.NamespaceLabelSelector)
	if err != nil || evictor.NamespaceLabelSelector == nil {
		t.Fatalf("DefaultEvictor.namespaceLabelSelector %v: %v", evictor.NamespaceLabelSelector, err)
	}
	return sel
}

// The example policy decodes with the descheduler's own types and passes
// its plugins' validation, and it does what docs/operations.md promises:
// evict, by preferred node affinity only, Pods in the namespaces that the
// webhook mutates, and nothing else.
func TestDeschedulerExampleEvictsOnlyMutatedPodsByAffinity(t *testing.T) {
	p := examplePolicyProfile(t)
	for point, enabled := range p.Enabled {
		want := []string(nil)
		if point == "deschedule" {
			want = []string{"RemovePodsViolatingNodeAffinity"}
		}
		if !slices.Equal(enabled, want) {
			t.Errorf("plugins enabled at %s: %v, want %v", point, enabled, want)
		}
	}
	if _, ok := p.Enabled["deschedule"]; !ok {
		t.Errorf("RemovePodsViolatingNodeAffinity is not enabled at deschedule: %v", p.Enabled)
	}

	var affinity struct {
		NodeAffinityType []string              `json:"nodeAffinityType"`
		Namespaces       any                   `json:"namespaces"`
		LabelSelector    *metav1.LabelSelector `json:"labelSelector"`
	}
	if err := json.Unmarshal(p.Args["RemovePodsViolatingNodeAffinity"], &affinity); err != nil {
		t.Fatal(err)
	}
	// The webhook's term is preferred; a required type would evict nothing
	// of ours and everything that requires another pool.
	if !slices.Equal(affinity.NodeAffinityType, []string{"preferredDuringSchedulingIgnoredDuringExecution"}) {
		t.Errorf("nodeAffinityType %v, want only preferredDuringSchedulingIgnoredDuringExecution", affinity.NodeAffinityType)
	}

	sel := exampleEvictorNamespaces(t, p.Args["DefaultEvictor"])
	// The namespaces the webhook selects, from its configuration.
	mwcSel, err := metav1.LabelSelectorAsSelector(mutatingWebhook(t).NamespaceSelector)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []map[string]string{
		{managedByLabel: "kyma", "kubernetes.io/metadata.name": "kyma-system"},
		{managedByLabel: "kyma", "kubernetes.io/metadata.name": "istio-system"},
		{"kubernetes.io/metadata.name": "shop"},
		{managedByLabel: "someone-else", "kubernetes.io/metadata.name": "other"},
	} {
		if got, want := sel.Matches(labels.Set(ns)), mwcSel.Matches(labels.Set(ns)); got != want {
			t.Errorf("namespace %v: the policy evicts there: %v, the webhook mutates there: %v", ns, got, want)
		}
	}
}

// The kustomization ships policy.yaml unchanged as the ConfigMap that the
// descheduler's own manifests mount.
func TestDeschedulerExampleShipsThePolicyUnchanged(t *testing.T) {
	objs := render(t, deschedulerExample)
	cm := find(t, objs, "ConfigMap", "descheduler-policy-configmap")
	if cm.GetNamespace() != "kube-system" || len(objs) != 1 {
		t.Fatalf("want only ConfigMap kube-system/descheduler-policy-configmap, got %v", ids(objs))
	}
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), deschedulerExample, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := unstructured.NestedString(cm.Object, "data", "policy.yaml")
	if got != string(data) {
		t.Fatalf("the ConfigMap's policy.yaml differs from %s/policy.yaml", deschedulerExample)
	}
}

// The checker refuses what the descheduler would refuse or misread: it is
// the oracle of the test above only if it can fail.
func TestDeschedulerPolicyCheckerRejectsBrokenPolicies(t *testing.T) {
	tool := deschedulerPolicyTool(t)
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), deschedulerExample, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := string(data)
	tests := []struct{ name, old, new string }{
		{name: "misspelt_field_is_rejected", old: "nodeFit: true", new: "nodeFitt: true"},
		{name: "misspelt_top_level_field_is_rejected", old: "\nprofiles:", new: "\nprofile:"},
		{name: "no_affinity_type_is_rejected", old: "          nodeAffinityType:\n            - preferredDuringSchedulingIgnoredDuringExecution\n", new: "          nodeAffinityType: []\n"},
		{name: "unknown_plugin_is_rejected", old: "          - RemovePodsViolatingNodeAffinity", new: "          - RemovePodsViolatingNodeAfinity"},
		{name: "unknown_version_is_rejected", old: "descheduler/v1alpha2", new: "descheduler/v1alpha9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(policy, tt.old) {
				t.Fatalf("policy.yaml no longer contains %q; update the test", tt.old)
			}
			path := filepath.Join(t.TempDir(), "policy.yaml")
			if err := os.WriteFile(path, []byte(strings.Replace(policy, tt.old, tt.new, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := process.Command{}.Run(t.Context(), tool, path)
			if r.Code != 1 {
				t.Fatalf("descheduler-policy: %v, want exit code 1\n%s", err, r)
			}
		})
	}
}
