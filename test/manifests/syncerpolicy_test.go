package manifests

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// The names deploy/syncer/policy.yaml and lease.yaml share with the rest of
// the syncer's manifests; cmd/cabundle-syncer's policy and Lease tests run
// them against an API server.
const syncerPolicyName = "cabundle-syncer"

func syncerPolicy(t *testing.T, objs []*unstructured.Unstructured) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
	typed(t, find(t, objs, "ValidatingAdmissionPolicy", syncerPolicyName), &p)
	typed(t, find(t, objs, "ValidatingAdmissionPolicyBinding", syncerPolicyName), &b)
	return &p, &b
}

// The policy and its binding are cluster-scoped and stay so through the
// base's namespace transformer; the policy is bound to deny, fails closed,
// and names the webhook configuration, the Deployment's ServiceAccount and
// the syncer's annotation. The Lease carries the Deployment's
// --leader-election-id and no spec that a re-apply would write.
func TestSyncerPolicyAndLeaseNameTheSyncersObjects(t *testing.T) {
	objs := render(t, syncerBase)
	p, b := syncerPolicy(t, objs)
	if p.Namespace != "" || b.Namespace != "" {
		t.Errorf("the policy (%q) or its binding (%q) has a namespace", p.Namespace, b.Namespace)
	}
	if b.Spec.PolicyName != p.Name || !slices.Equal(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding: policy %q, actions %v; want %q, [Deny]", b.Spec.PolicyName, b.Spec.ValidationActions, p.Name)
	}
	if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", p.Spec.FailurePolicy)
	}
	rules := p.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].ResourceNames, []string{webhookConfiguration}) ||
		!slices.Equal(rules[0].Resources, []string{"mutatingwebhookconfigurations"}) {
		t.Errorf("matchConstraints %+v, want the one webhook configuration %s", rules, webhookConfiguration)
	}
	d := deployment(t, objs, "cabundle-syncer")
	sa := d.Spec.Template.Spec.ServiceAccountName
	if len(p.Spec.MatchConditions) != 1 || !strings.Contains(p.Spec.MatchConditions[0].Expression, "':"+sa+"'") {
		t.Errorf("matchConditions %+v do not name the ServiceAccount %s", p.Spec.MatchConditions, sa)
	}
	if !strings.Contains(policyExpressions(p), "'"+syncer.StateAnnotation+"'") {
		t.Errorf("the policy does not name the annotation %s", syncer.StateAnnotation)
	}

	var lease coordinationv1.Lease
	typed(t, find(t, objs, "Lease", flags(t, container(t, d))["leader-election-id"]), &lease)
	if lease.Namespace != namespace || !reflect.DeepEqual(lease.Spec, coordinationv1.LeaseSpec{}) {
		t.Errorf("Lease %s/%s has spec %+v, want an empty spec in %s", lease.Namespace, lease.Name, lease.Spec, namespace)
	}
}

// Every field of a MutatingWebhook and of its clientConfig but caBundle is
// compared by some guard of the policy. A field that a newer Kubernetes
// adds fails here until a guard covers it.
func TestSyncerPolicyGuardsEveryFieldOfAWebhook(t *testing.T) {
	p, _ := syncerPolicy(t, render(t, syncerBase))
	exprs := policyExpressions(p)
	for _, f := range jsonFields(reflect.TypeFor[admissionregistrationv1.MutatingWebhook]()) {
		switch f {
		case "name":
			if !strings.Contains(exprs, ".map(w, w.name)") {
				t.Errorf("no guard keeps the webhooks' names and order")
			}
		case "clientConfig":
			for _, cf := range jsonFields(reflect.TypeFor[admissionregistrationv1.WebhookClientConfig]()) {
				if got := strings.Contains(exprs, "w.clientConfig.?"+cf+" =="); got != (cf != "caBundle") {
					t.Errorf("clientConfig.%s compared: %v, want %v", cf, got, cf != "caBundle")
				}
			}
		default:
			if !strings.Contains(exprs, "w.?"+f+" ==") {
				t.Errorf("no guard compares the webhook field %s", f)
			}
		}
	}
}

// policyExpressions joins the policy's variables and validations.
func policyExpressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) string {
	var b strings.Builder
	for _, v := range p.Spec.Variables {
		b.WriteString(v.Expression + "\n")
	}
	for _, v := range p.Spec.Validations {
		b.WriteString(v.Expression + "\n")
	}
	return b.String()
}

// jsonFields lists the JSON names of a struct's fields.
func jsonFields(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
