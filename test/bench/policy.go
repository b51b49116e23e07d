package bench

import (
	"fmt"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The admission configurations of arms B and C.
const (
	managedByLabel = "operator.kyma-project.io/managed-by"
	// policyLabel selects arm C's namespace for the policy, so that neither
	// configuration matches the other's namespace.
	policyLabel = "kim-snatch.kyma-project.io/bench-policy"
	mwcName     = "kim-snatch-mutating-webhook-configuration"
)

// webhookConfiguration is deploy/webhook's MutatingWebhookConfiguration
// with a url clientConfig for a webhook outside the cluster, trusted
// through caBundle.
func webhookConfiguration(url string, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	root, err := tools.RepoRoot()
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

// mutatingPolicy reads the MutatingAdmissionPolicy and its binding that
// deploy/examples/policy ships, and binds the policy to namespaces labelled
// policyLabel=true instead of the Kyma-managed ones, so that arm C's Pods
// meet the policy alone and arm B's the webhook alone.
func mutatingPolicy() (*admissionregistrationv1.MutatingAdmissionPolicy, *admissionregistrationv1.MutatingAdmissionPolicyBinding, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, nil, err
	}
	const file = "deploy/examples/policy/mutatingadmissionpolicy.yaml"
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, nil, err
	}
	docs, err := objects.Decode(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(docs) != 2 {
		return nil, nil, fmt.Errorf("%s: want the policy and its binding, got %d documents", file, len(docs))
	}
	policy := &admissionregistrationv1.MutatingAdmissionPolicy{}
	binding := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	if err := objects.Into(docs[0], policy); err != nil {
		return nil, nil, fmt.Errorf("decode the policy of %s: %w", file, err)
	}
	if err := objects.Into(docs[1], binding); err != nil {
		return nil, nil, fmt.Errorf("decode the binding of %s: %w", file, err)
	}
	if policy.Kind != "MutatingAdmissionPolicy" || binding.Kind != "MutatingAdmissionPolicyBinding" || binding.Spec.PolicyName != policy.Name {
		return nil, nil, fmt.Errorf("%s: want a MutatingAdmissionPolicy and its binding, got %s %q and %s for %q",
			file, policy.Kind, policy.Name, binding.Kind, binding.Spec.PolicyName)
	}
	binding.Spec.MatchResources.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{policyLabel: "true"}}
	return policy, binding, nil
}
