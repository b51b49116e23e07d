package manifests

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// The end-to-end suite's Prometheus stack, and the overlay through which
// the suite installs deploy/default.
const (
	e2eMonitoring = "test/e2e/neighbours/monitoring"
	e2eOverlay    = "test/e2e/overlay"
)

// e2ePrometheus is the ServiceAccount of the suite's two Prometheus.
var e2ePrometheus = rbacv1.Subject{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}

// The suite's Prometheus discovers the targets of kyma-system only through
// the Role of deploy/components/prometheus, which its overlay holds, as
// kube-prometheus' Prometheus does in an installation: its stack grants it
// no cluster-wide list of what service discovery reads, and no Role in
// kyma-system. A component without its Role leaves the suite's Prometheus
// without a target of either binary, where a broader grant would hide it.
func TestEndToEndPrometheusDiscoversKymaSystemOnlyThroughTheComponent(t *testing.T) {
	objs := render(t, e2eMonitoring)
	bound := 0
	for _, o := range append(objects.OfKind(objs, "ClusterRoleBinding"), objects.OfKind(objs, "RoleBinding")...) {
		var b rbacv1.RoleBinding // a ClusterRoleBinding has the same subjects and roleRef
		decode(t, o, &b)
		if !slices.Contains(b.Subjects, e2ePrometheus) {
			continue
		}
		bound++
		if o.GetKind() == "RoleBinding" {
			if b.Namespace == namespace {
				t.Errorf("%s grants the suite's Prometheus rights in %s", id(o), namespace)
			}
			continue
		}
		var role rbacv1.ClusterRole
		decode(t, one(t, objs, "ClusterRole", b.RoleRef.Name), &role)
		for _, r := range role.Rules {
			if listsDiscovery(r) {
				t.Errorf("%s lets the suite's Prometheus list %v in every namespace, %s too", id(o), r.Resources, namespace)
			}
		}
	}
	if bound == 0 {
		t.Fatalf("%s binds nothing to %+v", e2eMonitoring, e2ePrometheus)
	}
	var rb rbacv1.RoleBinding
	decode(t, one(t, render(t, e2eOverlay), "RoleBinding", "kim-snatch-prometheus"), &rb)
	if rb.Namespace != namespace || !slices.Contains(rb.Subjects, e2ePrometheus) {
		t.Errorf("%s binds the component's Role in %s to %+v, want the suite's Prometheus in %s", e2eOverlay, rb.Namespace, rb.Subjects, namespace)
	}
}

// listsDiscovery reports whether r lets its subject list what Prometheus
// service discovery reads.
func listsDiscovery(r rbacv1.PolicyRule) bool {
	anyOf := func(have []string, want ...string) bool {
		return slices.ContainsFunc(have, func(h string) bool { return h == "*" || slices.Contains(want, h) })
	}
	return anyOf(r.Verbs, "list") && anyOf(r.APIGroups, "", "discovery.k8s.io") &&
		anyOf(r.Resources, "services", "endpoints", "pods", "endpointslices")
}
