package manifests

import (
	"reflect"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// mutatingWebhook returns the one webhook entry of the base's
// MutatingWebhookConfiguration.
func mutatingWebhook(t testing.TB) admissionregistrationv1.MutatingWebhook {
	t.Helper()
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	typed(t, find(t, render(t, webhookBase), "MutatingWebhookConfiguration", webhookConfiguration), &mwc)
	if len(mwc.Webhooks) != 1 {
		t.Fatalf("%s has %d webhooks, want 1", webhookConfiguration, len(mwc.Webhooks))
	}
	return mwc.Webhooks[0]
}

func TestWebhookConfigurationFailsOpenFastAndOnlyOnPodCreates(t *testing.T) {
	w := mutatingWebhook(t)
	tests := []struct {
		name      string
		got, want any
	}{
		{name: "failure_policy_is_ignore", got: deref(w.FailurePolicy), want: admissionregistrationv1.Ignore},
		{name: "timeout_is_2s", got: deref(w.TimeoutSeconds), want: int32(2)},
		{name: "side_effects_are_none", got: deref(w.SideEffects), want: admissionregistrationv1.SideEffectClassNone},
		{name: "match_policy_is_equivalent", got: deref(w.MatchPolicy), want: admissionregistrationv1.Equivalent},
		{name: "reinvocation_is_never", got: deref(w.ReinvocationPolicy), want: admissionregistrationv1.NeverReinvocationPolicy},
		{name: "admission_review_is_v1", got: w.AdmissionReviewVersions, want: []string{"v1"}},
		{name: "rules_match_pod_creates_only", got: w.Rules, want: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{
				APIGroups:   []string{""},
				APIVersions: []string{"v1"},
				Resources:   []string{"pods"},
				Scope:       ptr(admissionregistrationv1.NamespacedScope),
			},
		}}},
		{name: "path_is_mutate_pod", got: w.ClientConfig.Service != nil && deref(w.ClientConfig.Service.Path) == "/mutate-pod", want: true},
		{name: "url_is_unset", got: w.ClientConfig.URL, want: (*string)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Fatalf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

// The syncer owns clientConfig.caBundle; the manifests must not carry the
// field at all, not even empty, or every apply would take it back.
func TestWebhookConfigurationHasNoCABundle(t *testing.T) {
	for _, dir := range allKustomizations {
		for _, o := range objects.OfKind(render(t, dir), "MutatingWebhookConfiguration") {
			webhooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
			for i, w := range webhooks {
				if _, found, _ := unstructured.NestedFieldNoCopy(w.(map[string]any), "clientConfig", "caBundle"); found {
					t.Errorf("%s: %s webhooks[%d] sets clientConfig.caBundle", dir, id(o), i)
				}
			}
		}
	}
}

// The webhook entry calls the webhook's Service on the port that leads to
// the container's webhook port, which is the one --webhook-port opens.
func TestWebhookConfigurationReachesTheWebhook(t *testing.T) {
	objs := render(t, webhookBase)
	ref := mutatingWebhook(t).ClientConfig.Service
	if ref == nil {
		t.Fatal("the webhook has no clientConfig.service")
	}
	var svc corev1.Service
	typed(t, find(t, objs, "Service", ref.Name), &svc)
	if svc.Namespace != ref.Namespace {
		t.Fatalf("clientConfig.service.namespace is %q, the Service is in %q", ref.Namespace, svc.Namespace)
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == deref(ref.Port) })
	if i < 0 {
		t.Fatalf("Service %s has no port %d", svc.Name, deref(ref.Port))
	}
	c := container(t, deployment(t, objs, "snatch-webhook"))
	if got, want := containerPort(t, c, svc.Spec.Ports[i].TargetPort.String()), flagPort(t, c, "webhook-port"); got != want {
		t.Fatalf("Service port %d leads to container port %d, but --webhook-port is %d", deref(ref.Port), got, want)
	}
	if !selects(svc.Spec.Selector, deployment(t, objs, "snatch-webhook").Spec.Template.Labels) {
		t.Fatalf("Service %s selector %v does not select the webhook's Pods", svc.Name, svc.Spec.Selector)
	}
}

// Both ways of issuing the certificate produce the Secret the Deployment
// mounts, as a CA, for the Service's DNS name.
func TestCertificateMatchesTheService(t *testing.T) {
	tests := []struct {
		name       string
		dir        string
		group      string
		secretPath []string
	}{
		{name: "gardener_cert_management_issues_the_mounted_ca", dir: webhookBase, group: "cert.gardener.cloud", secretPath: []string{"spec", "secretRef", "name"}},
		{name: "cert_manager_example_issues_the_mounted_ca", dir: certManagerSample, group: "cert-manager.io", secretPath: []string{"spec", "secretName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.dir)
			var certs, issuers []*unstructured.Unstructured
			for _, o := range objs {
				if o.GroupVersionKind().Group != tt.group {
					continue
				}
				switch o.GetKind() {
				case "Certificate":
					certs = append(certs, o)
				case "Issuer":
					issuers = append(issuers, o)
				}
			}
			if len(certs) != 1 || len(issuers) != 1 {
				t.Fatalf("want one %s Certificate and one Issuer, got %d and %d", tt.group, len(certs), len(issuers))
			}
			cert, issuer := certs[0], issuers[0]
			if secret, _, _ := unstructured.NestedString(cert.Object, tt.secretPath...); secret != secretName {
				t.Errorf("the Certificate writes Secret %q, want %s", secret, secretName)
			}
			if isCA, _, _ := unstructured.NestedBool(cert.Object, "spec", "isCA"); !isCA {
				t.Error("the Certificate is not a CA; the syncer publishes its ca.crt as the caBundle")
			}
			if ref, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name"); ref != issuer.GetName() {
				t.Errorf("the Certificate's issuerRef names %q, the Issuer is %q", ref, issuer.GetName())
			}
			if _, selfSigned, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); !selfSigned {
				t.Error("the Issuer is not selfSigned")
			}
			ref := mutatingWebhook(t).ClientConfig.Service
			dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
			if want := ref.Name + "." + ref.Namespace + ".svc"; !slices.Contains(dnsNames, want) {
				t.Errorf("the Certificate's dnsNames %v lack %s, the name the API server verifies", dnsNames, want)
			}
			var mounted []string
			for _, v := range deployment(t, objs, "snatch-webhook").Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					mounted = append(mounted, v.Secret.SecretName)
				}
			}
			if !slices.Equal(mounted, []string{secretName}) {
				t.Errorf("the webhook mounts Secrets %v, want [%s]", mounted, secretName)
			}
		})
	}
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
