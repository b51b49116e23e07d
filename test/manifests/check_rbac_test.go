package manifests

import (
	"context"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The identity of `cabundle-syncer check` (deploy/syncer/check.yaml), as the
// API server's authorizer sees it: it reads what check reads, the one
// Secret among Secrets, and its one write is creating Pods in its own
// namespace kim-snatch-check, for the admission item's dry run, where it may
// change nothing that bounds such a Pod (docs/operations.md, "The check
// identity").
func TestCheckIdentityReadsWhatCheckReadsAndCreatesOnlyCheckPods(t *testing.T) {
	env := apiServer(t)
	ctx := t.Context()
	env.namespace(t, namespace, nil)
	for _, o := range render(t, syncerBase) {
		if o.GetLabels()["app.kubernetes.io/name"] != "kim-snatch-check" || o.GetKind() == "CronJob" {
			continue
		}
		if err := env.apply(ctx, o, false); err != nil {
			t.Fatalf("%s: %v", id(o), err)
		}
	}
	user := "system:serviceaccount:" + namespace + ":kim-snatch-check"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	can := func(a authorizationv1.ResourceAttributes) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &a}}
		res, err := env.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return res.Status.Allowed, nil
	}
	core := func(ns, verb, resource, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource, Name: name}
	}
	// RBAC changes reach the authorizer's cache within moments.
	poll.Eventually(t, "the bindings to take effect", func(context.Context) error {
		if ok, err := can(core(namespace, "get", "secrets", secretName)); err != nil || !ok {
			return fmt.Errorf("%s cannot get Secret %s/%s yet (%v)", user, namespace, secretName, err)
		}
		return nil
	})

	mwc := func(verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: "admissionregistration.k8s.io", Verb: verb, Resource: "mutatingwebhookconfigurations", Name: name}
	}
	lease := func(verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: "coordination.k8s.io", Namespace: namespace, Verb: verb, Resource: "leases", Name: name}
	}
	tests := []struct {
		name  string
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{name: "get_the_secret_is_allowed", attrs: core(namespace, "get", "secrets", secretName), want: true},
		{name: "get_another_secret_is_denied", attrs: core(namespace, "get", "secrets", "other")},
		{name: "list_all_secrets_is_denied", attrs: core(namespace, "list", "secrets", "")},
		{name: "list_secrets_elsewhere_is_denied", attrs: core("", "list", "secrets", "")},
		{name: "get_the_emergency_disable_marker_is_allowed", attrs: core(namespace, "get", "configmaps", syncer.EmergencyDisableName), want: true},
		{name: "get_another_configmap_is_denied", attrs: core(namespace, "get", "configmaps", "other")},
		{name: "list_all_configmaps_is_denied", attrs: core(namespace, "list", "configmaps", "")},
		{name: "delete_the_emergency_disable_marker_is_denied", attrs: core(namespace, "delete", "configmaps", syncer.EmergencyDisableName)},
		{name: "get_the_webhook_configuration_is_allowed", attrs: mwc("get", webhookConfiguration), want: true},
		{name: "get_another_webhook_configuration_is_denied", attrs: mwc("get", "other")},
		{name: "get_the_lease_is_allowed", attrs: lease("get", "cabundle-syncer"), want: true},
		{name: "list_pods_of_kyma_system_is_allowed", attrs: core(namespace, "list", "pods", ""), want: true},
		{name: "list_pods_everywhere_is_allowed", attrs: core("", "list", "pods", ""), want: true},
		{name: "list_nodes_is_allowed", attrs: core("", "list", "nodes", ""), want: true},
		{name: "get_a_namespace_is_allowed", attrs: core("", "get", "namespaces", "istio-system"), want: true},
		{name: "get_the_webhook_service_is_allowed", attrs: core(namespace, "get", "services", "snatch-webhook"), want: true},
		{name: "list_endpointslices_of_kyma_system_is_allowed", attrs: authorizationv1.ResourceAttributes{Group: "discovery.k8s.io", Namespace: namespace, Verb: "list", Resource: "endpointslices"}, want: true},
		{name: "get_services_elsewhere_is_denied", attrs: core("default", "get", "services", "kubernetes")},
		{name: "update_the_webhook_service_is_denied", attrs: core(namespace, "update", "services", "snatch-webhook")},
		{name: "delete_endpointslices_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "discovery.k8s.io", Namespace: namespace, Verb: "delete", Resource: "endpointslices", Name: "x"}},
		{name: "port_forward_to_pods_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "pods", Subresource: "portforward", Name: "x"}},
		{name: "proxy_to_services_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "get", Resource: "services", Subresource: "proxy", Name: "snatch-webhook"}},
		{name: "patch_the_webhook_configuration_is_denied", attrs: mwc("patch", webhookConfiguration)},
		{name: "update_the_lease_is_denied", attrs: lease("update", "cabundle-syncer")},
		{name: "create_pods_is_denied", attrs: core(namespace, "create", "pods", "")},
		{name: "delete_pods_is_denied", attrs: core(namespace, "delete", "pods", "x")},
		{name: "patch_nodes_is_denied", attrs: core("", "patch", "nodes", "x")},
		{name: "exec_into_pods_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "pods", Subresource: "exec", Name: "x"}},
		{name: "update_the_secret_is_denied", attrs: core(namespace, "update", "secrets", secretName)},
		{name: "create_pods_in_the_check_namespace_is_allowed", attrs: core(checkNamespace, "create", "pods", ""), want: true},
		{name: "create_pods_elsewhere_is_denied", attrs: core("default", "create", "pods", "")},
		{name: "create_pods_in_every_namespace_is_denied", attrs: core("", "create", "pods", "")},
		{name: "get_pods_in_the_check_namespace_is_allowed", attrs: core(checkNamespace, "get", "pods", "x"), want: true},
		{name: "delete_pods_in_the_check_namespace_is_denied", attrs: core(checkNamespace, "delete", "pods", "x")},
		{name: "update_pods_in_the_check_namespace_is_denied", attrs: core(checkNamespace, "update", "pods", "x")},
		{name: "exec_into_pods_of_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: checkNamespace, Verb: "create", Resource: "pods", Subresource: "exec", Name: "x"}},
		{name: "attach_to_pods_of_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: checkNamespace, Verb: "create", Resource: "pods", Subresource: "attach", Name: "x"}},
		{name: "create_pod_bindings_in_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: checkNamespace, Verb: "create", Resource: "pods", Subresource: "binding", Name: "x"}},
		{name: "evict_pods_in_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: checkNamespace, Verb: "create", Resource: "pods", Subresource: "eviction", Name: "x"}},
		{name: "create_deployments_in_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "apps", Namespace: checkNamespace, Verb: "create", Resource: "deployments"}},
		{name: "create_secrets_in_the_check_namespace_is_denied", attrs: core(checkNamespace, "create", "secrets", "")},
		{name: "get_secrets_in_the_check_namespace_is_denied", attrs: core(checkNamespace, "get", "secrets", "x")},
		{name: "create_serviceaccounts_in_the_check_namespace_is_denied", attrs: core(checkNamespace, "create", "serviceaccounts", "")},
		{name: "create_tokens_in_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: checkNamespace, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "default"}},
		{name: "delete_the_quota_is_denied", attrs: core(checkNamespace, "delete", "resourcequotas", "kim-snatch-check")},
		{name: "delete_the_network_policy_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "networking.k8s.io", Namespace: checkNamespace, Verb: "delete", Resource: "networkpolicies", Name: "kim-snatch-check-deny-all"}},
		{name: "label_the_check_namespace_is_denied", attrs: core("", "patch", "namespaces", checkNamespace)},
		{name: "bind_roles_in_the_check_namespace_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "rbac.authorization.k8s.io", Namespace: checkNamespace, Verb: "create", Resource: "rolebindings"}},
		// syncer-lease asks whether the leader may patch the MWC; a review
		// only answers questions, it reads and writes nothing.
		{name: "create_subjectaccessreviews_is_allowed", attrs: authorizationv1.ResourceAttributes{Group: "authorization.k8s.io", Verb: "create", Resource: "subjectaccessreviews"}, want: true},
		{name: "create_tokenreviews_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "authentication.k8s.io", Verb: "create", Resource: "tokenreviews"}},
		{name: "create_service_account_tokens_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: "cabundle-syncer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := can(tt.attrs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("%s may %s %+v: %v, want %v", user, tt.attrs.Verb, tt.attrs, got, tt.want)
			}
		})
	}
}
