package check

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// checkWebhookConfiguration checks what decides whether the API server calls
// the webhook for a Kyma Pod, and what a failed call does; not the caBundle.
func checkWebhookConfiguration(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, err error) Result {
	what := "MutatingWebhookConfiguration " + cfg.WebhookConfiguration
	apply := "Apply the webhook's manifests again (kubectl apply -k deploy/webhook); the syncer never creates or edits anything but the caBundle"
	switch {
	case apierrors.IsNotFound(err):
		return fail(IDWebhookConfiguration, what+" not found; the API server calls no webhook for Pods", apply+"; or fix --webhook-configuration.")
	case err != nil:
		return readFailure(IDWebhookConfiguration, what, err)
	case len(mwc.Webhooks) == 0:
		return fail(IDWebhookConfiguration, what+" has no webhook entries", apply+".")
	}
	// A namespace Kyma manages, as the API server sees it: the managed-by
	// label and the name label every namespace carries, here the webhook's.
	kyma := labels.Set{ManagedByLabel: ManagedByValue, corev1.LabelMetadataName: cfg.Namespace}
	var wrong, names []string
	for _, wh := range mwc.Webhooks {
		names = append(names, wh.Name)
		if problems := entryProblems(wh, kyma); len(problems) > 0 {
			wrong = append(wrong, fmt.Sprintf("entry %s: %s", wh.Name, strings.Join(problems, ", ")))
		}
	}
	if len(wrong) > 0 {
		return fail(IDWebhookConfiguration, what+": "+strings.Join(wrong, "; "), apply+", or compare with deploy/webhook/mutatingwebhookconfiguration.yaml.")
	}
	count := fmt.Sprintf("%d entries", len(mwc.Webhooks))
	if len(mwc.Webhooks) == 1 {
		count = "1 entry"
	}
	return pass(IDWebhookConfiguration, fmt.Sprintf("%s: %s (%s) send Pod CREATE in namespaces labelled %s=%s to the webhook, failurePolicy Ignore",
		what, count, strings.Join(names, ", "), ManagedByLabel, ManagedByValue))
}

// entryProblems lists what keeps an entry from doing its job.
func entryProblems(wh admissionregistrationv1.MutatingWebhook, kyma labels.Set) []string {
	var problems []string
	if !coversPodCreate(wh.Rules) {
		problems = append(problems, "rules do not cover CREATE of pods in the core group, v1")
	}
	// The v1 API defaults failurePolicy to Fail on write, so an object read
	// from the API server always has one; a nil here is Fail too.
	if fp := ptr.Deref(wh.FailurePolicy, ""); fp != admissionregistrationv1.Ignore {
		problems = append(problems, fmt.Sprintf("failurePolicy is %s, want Ignore: a webhook outage would block Pod creation",
			cmp.Or(fp, "unset (Fail)")))
	}
	sel, err := namespaceSelectorOf(wh)
	switch {
	case err != nil:
		problems = append(problems, "namespaceSelector is invalid: "+err.Error())
	case !sel.Matches(kyma):
		problems = append(problems, fmt.Sprintf("namespaceSelector %q does not select a namespace labelled %s=%s", sel, ManagedByLabel, ManagedByValue))
	}
	return problems
}

// coversPodCreate reports whether a rule matches a CREATE of a core v1 Pod
// as the API server matches: wildcards count, Cluster scope never matches.
func coversPodCreate(rules []admissionregistrationv1.RuleWithOperations) bool {
	return slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
		return (slices.Contains(r.Operations, admissionregistrationv1.Create) || slices.Contains(r.Operations, admissionregistrationv1.OperationAll)) &&
			containsAny(r.APIGroups, "", "*") &&
			containsAny(r.APIVersions, "v1", "*") &&
			containsAny(r.Resources, "pods", "*", "*/*") &&
			(r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope)
	})
}

func containsAny(list []string, values ...string) bool {
	return slices.ContainsFunc(values, func(v string) bool { return slices.Contains(list, v) })
}

// namespaceSelectorOf returns the selector the API server applies: it defaults a missing one to {}, which matches
// every namespace, whereas metav1.LabelSelectorAsSelector turns nil into one that matches nothing.
func namespaceSelectorOf(wh admissionregistrationv1.MutatingWebhook) (labels.Selector, error) {
	if wh.NamespaceSelector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(wh.NamespaceSelector)
}

// checkNamespace answers "why did my Pod not get the affinity" for the target namespace from the namespaceSelectors.
func checkNamespace(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	name := cfg.TargetNamespace
	ns, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fail(IDNamespace, "namespace "+name+" not found", "Check the name given to --target-namespace: kubectl get namespaces.")
	}
	if res, failed := unreadable(IDNamespace, "get Namespace "+name, "Namespace "+name, err); failed {
		return res
	}
	if mwc == nil {
		return skipped(IDNamespace, mwcAbsent(cfg, mwcErr)+", so there is no namespaceSelector to evaluate", IDWebhookConfiguration)
	}
	set := labels.Set(ns.Labels)
	var selecting, excluding []string
	for _, wh := range mwc.Webhooks {
		sel, err := namespaceSelectorOf(wh)
		switch {
		case err != nil:
			excluding = append(excluding, fmt.Sprintf("%s (invalid namespaceSelector: %v)", wh.Name, err))
		case sel.Matches(set):
			selecting = append(selecting, wh.Name)
		default:
			excluding = append(excluding, fmt.Sprintf("%s (namespaceSelector %q)", wh.Name, sel))
		}
	}
	kyma, optOut := ManagedByLabel+"="+ManagedByValue, affinity.OptOutLabel+"="+affinity.OptOutValue
	switch {
	case len(selecting) > 0:
		return pass(IDNamespace, fmt.Sprintf("Pods created in %s are sent to the webhook (entries: %s); Pods labelled %s are left alone", name, strings.Join(selecting, ", "), optOut))
	case set.Get(ManagedByLabel) != ManagedByValue:
		return warn(IDNamespace, fmt.Sprintf("Pods created in %s are not sent to the webhook: the namespace lacks the label %s", name, kyma),
			fmt.Sprintf("Only namespaces Kyma manages get the affinity; if Kyma manages %s, its label is missing (kubectl label namespace %s %s).", name, name, kyma))
	}
	if len(excluding) == 0 {
		excluding = []string{"there are no webhook entries"}
	}
	return warn(IDNamespace, fmt.Sprintf("Pods created in %s are not sent to the webhook although it is labelled %s: excluded by %s", name, kyma, strings.Join(excluding, ", ")),
		"The namespace is excluded on purpose (kube-system) or the selector was changed; compare with deploy/webhook/mutatingwebhookconfiguration.yaml. To exclude single Pods use "+optOut+" instead.")
}
