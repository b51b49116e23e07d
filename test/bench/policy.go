package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// The admission configurations of arms B and C.
const (
	managedByLabel = "operator.kyma-project.io/managed-by"
	// policyLabel selects arm C's namespace for the policy, so that neither
	// configuration matches the other's namespace.
	policyLabel   = "kim-snatch.kyma-project.io/bench-policy"
	mwcName       = "kim-snatch-mutating-webhook-configuration"
	policyName    = "kim-snatch-preferred-pool"
	policyBinding = "kim-snatch-preferred-pool"
)

// webhookConfiguration is deploy/webhook's MutatingWebhookConfiguration
// with a url clientConfig for a webhook outside the cluster, trusted
// through caBundle.
func webhookConfiguration(url string, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "webhook", "mutatingwebhookconfiguration.yaml"))
	if err != nil {
		return nil, err
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.UnmarshalStrict(b, mwc); err != nil {
		return nil, fmt.Errorf("decode deploy/webhook/mutatingwebhookconfiguration.yaml: %w", err)
	}
	if mwc.Name != mwcName || len(mwc.Webhooks) == 0 {
		return nil, fmt.Errorf("deploy/webhook/mutatingwebhookconfiguration.yaml: want %s with webhooks, got %q with %d", mwcName, mwc.Name, len(mwc.Webhooks))
	}
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle}
	}
	return mwc, nil
}

// The policy's CEL, for the default policy. The conditions are the
// webhook's (pkg/affinity) as far as the API server can express them:
// Pods, CREATE, the opt-out and the webhook's own Pods excluded by the
// object selector, mirror Pods and bound Pods excluded, and no patch when
// the Pod already says something about the pool label key (nodeSelector,
// a required or a preferred term). The patch only adds, as the webhook's.
// The typed Object constructors are known to the mutation's expression
// only, not to a policy variable, so the term (termExpr) is written into
// each branch of patchExpr where it says TERM.
const (
	poolKey = affinity.DefaultPoolLabelKey

	notMirror = `!has(object.metadata.annotations) || !('` + affinity.MirrorPodAnnotation + `' in object.metadata.annotations)`
	notBound  = `!has(object.spec.nodeName) || object.spec.nodeName == ''`
	poolFree  = `!(has(object.spec.nodeSelector) && '` + poolKey + `' in object.spec.nodeSelector) &&
!(has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity) && (
  (has(object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) &&
    object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.exists(t,
      has(t.matchExpressions) && t.matchExpressions.exists(e, e.key == '` + poolKey + `'))) ||
  (has(object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) &&
    object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.exists(t,
      has(t.preference.matchExpressions) && t.preference.matchExpressions.exists(e, e.key == '` + poolKey + `')))))`

	prefType = `Object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`
	termExpr = prefType + `{
  weight: %d,
  preference: ` + prefType + `.preference{
    matchExpressions: [` + prefType + `.preference.matchExpressions{key: '%s', operator: 'In', values: ['%s']}]
  }
}`
	patchExpr = `!has(object.spec.affinity) ?
  [JSONPatch{op: 'add', path: '/spec/affinity', value: Object.spec.affinity{
    nodeAffinity: Object.spec.affinity.nodeAffinity{preferredDuringSchedulingIgnoredDuringExecution: [TERM]}}}] :
!has(object.spec.affinity.nodeAffinity) ?
  [JSONPatch{op: 'add', path: '/spec/affinity/nodeAffinity', value: Object.spec.affinity.nodeAffinity{
    preferredDuringSchedulingIgnoredDuringExecution: [TERM]}}] :
!has(object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) ?
  [JSONPatch{op: 'add', path: '/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution', value: [TERM]}] :
  [JSONPatch{op: 'add', path: '/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/-', value: TERM}]`
)

// mutatingPolicy is the MutatingAdmissionPolicy equivalent of the webhook,
// and its binding to namespaces labelled policyLabel=true.
func mutatingPolicy(p affinity.Policy) (*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
							Scope: ptr.To(admissionregistrationv1.NamespacedScope),
						},
					},
				}},
				MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
				ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: affinity.OptOutLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{affinity.OptOutValue}},
					{Key: "app.kubernetes.io/name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"snatch-webhook"}},
				}},
			},
			FailurePolicy:      ptr.To(admissionregistrationv1.Ignore),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "exclude-mirror-pods", Expression: notMirror},
				{Name: "exclude-bound-pods", Expression: notBound},
				{Name: "pool-key-not-set", Expression: poolFree},
			},
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: strings.ReplaceAll(patchExpr, "TERM",
					fmt.Sprintf(termExpr, p.Weight, p.PoolLabelKey, p.WorkerPool))},
			}},
		},
	}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policyBinding},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName: policyName,
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: policyLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}},
					{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
				}},
			},
		},
	}
	return policy, binding
}
