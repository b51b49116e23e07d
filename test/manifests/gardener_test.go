package manifests

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Gardener's rules for a "problematic" webhook, written from Gardener's
// documentation (Shoot status, constraint HibernationPossible): Gardener's
// module is far too large to build here for its matcher alone. A webhook
// on Pods or Nodes with failurePolicy Fail that reaches kube-system blocks
// a shoot's wake-up; even with Ignore, a timeout above 15 s can block
// control-plane requests, whose clients give up after 30 s; and some
// resources trigger the remediator whatever the namespace. A problematic
// webhook sets HibernationPossible and MaintenancePreconditionsSatisfied
// to False on the Shoot, and the remediator rewrites it.
const gardenerMaxTimeoutSeconds = 15

// gardenerSensitive are the resources that Gardener's documentation names
// as triggering the remediator even outside kube-system.
var gardenerSensitive = []string{
	"endpoints", "nodes", "clusterroles", "clusterrolebindings", "customresourcedefinitions",
	"apiservices", "certificatesigningrequests", "priorityclasses",
}

// gardenerKubeSystem is kube-system's labels on a shoot.
var gardenerKubeSystem = labels.Set{"kubernetes.io/metadata.name": "kube-system", "gardener.cloud/purpose": "kube-system"}

func TestWebhookIsNotProblematicForGardener(t *testing.T) {
	w := mutatingWebhook(t)
	sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
	if err != nil || w.NamespaceSelector == nil {
		t.Fatalf("namespaceSelector %v: %v; an unset selector matches kube-system", w.NamespaceSelector, err)
	}
	tests := []struct {
		name string
		ok   bool
		why  string
	}{
		{name: "failure_policy_is_ignore", ok: w.FailurePolicy != nil && *w.FailurePolicy == admissionregistrationv1.Ignore,
			why: "failurePolicy must be Ignore: a Pod webhook that fails closed blocks a shoot's wake-up"},
		{name: "timeout_is_set_and_at_most_15s", ok: w.TimeoutSeconds != nil && *w.TimeoutSeconds <= gardenerMaxTimeoutSeconds,
			why: "timeoutSeconds must be set and at most 15: an unset one is 10 s in v1 but not ours to choose, above 15 s it is problematic even with Ignore"},
		{name: "kube_system_is_excluded", ok: !sel.Matches(gardenerKubeSystem),
			why: "the namespaceSelector must not select kube-system as Gardener labels it"},
		{name: "rules_name_no_resource_gardener_guards", ok: !slices.ContainsFunc(w.Rules, func(r admissionregistrationv1.RuleWithOperations) bool {
			return slices.ContainsFunc(r.Resources, func(res string) bool { return res == "*" || slices.Contains(gardenerSensitive, res) })
		}), why: "the rules must not name a resource Gardener's remediator guards in every namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Errorf("%s: %s", w.Name, tt.why)
			}
		})
	}
}
