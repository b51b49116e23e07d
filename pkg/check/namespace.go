package check

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// checkNamespace explains whether Pods created in the target namespace are
// sent to the webhook: the question behind most "why did my Pod not get the
// affinity" reports. It evaluates each entry's namespaceSelector against
// the namespace's labels as the API server does.
func checkNamespace(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	ns, err := client.CoreV1().Namespaces().Get(ctx, cfg.TargetNamespace, metav1.GetOptions{})
	switch {
	case isNotFound(err):
		return Result{
			ID:          IDNamespace,
			Status:      StatusFail,
			Message:     fmt.Sprintf("namespace %s not found", cfg.TargetNamespace),
			Remediation: "Check the name given to --target-namespace: kubectl get namespaces.",
		}
	case apierrors.IsForbidden(err):
		return notPermitted(IDNamespace, "get Namespace "+cfg.TargetNamespace, err)
	case err != nil:
		return readFailure(IDNamespace, "Namespace "+cfg.TargetNamespace, err)
	}
	if mwc == nil {
		reason := "not found"
		if !isNotFound(mwcErr) {
			reason = "could not be read"
		}
		return Result{
			ID:          IDNamespace,
			Status:      StatusSkip,
			Message:     fmt.Sprintf("MutatingWebhookConfiguration %s %s, so there is no namespaceSelector to evaluate (see %s)", cfg.WebhookConfiguration, reason, IDWebhookConfiguration),
			Remediation: "Fix the check named in the message first.",
		}
	}
	return namespaceResult(cfg, ns, mwc)
}

// namespaceResult evaluates the entries' namespaceSelectors against ns.
func namespaceResult(cfg Config, ns *corev1.Namespace, mwc *admissionregistrationv1.MutatingWebhookConfiguration) Result {
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
	optOut := fmt.Sprintf("Pods labelled %s=%s are left alone", affinity.OptOutLabel, affinity.OptOutValue)
	if len(selecting) > 0 {
		return Result{
			ID:     IDNamespace,
			Status: StatusPass,
			Message: fmt.Sprintf("Pods created in %s are sent to the webhook (entries: %s); %s",
				ns.Name, strings.Join(selecting, ", "), optOut),
		}
	}
	if set.Get(ManagedByLabel) != ManagedByValue {
		return Result{
			ID:     IDNamespace,
			Status: StatusWarn,
			Message: fmt.Sprintf("Pods created in %s are not sent to the webhook: the namespace lacks the label %s=%s",
				ns.Name, ManagedByLabel, ManagedByValue),
			Remediation: fmt.Sprintf("Only namespaces Kyma manages get the affinity; if Kyma manages %s, its label is missing (kubectl label namespace %s %s=%s).",
				ns.Name, ns.Name, ManagedByLabel, ManagedByValue),
		}
	}
	if len(excluding) == 0 {
		excluding = []string{"there are no webhook entries"}
	}
	return Result{
		ID:     IDNamespace,
		Status: StatusWarn,
		Message: oneLine(fmt.Sprintf("Pods created in %s are not sent to the webhook although it is labelled %s=%s: excluded by %s",
			ns.Name, ManagedByLabel, ManagedByValue, strings.Join(excluding, ", "))),
		Remediation: fmt.Sprintf("The namespace is excluded on purpose (kube-system) or the selector was changed; compare with deploy/webhook/mutatingwebhookconfiguration.yaml. To exclude single Pods use %s=%s instead.", affinity.OptOutLabel, affinity.OptOutValue),
	}
}
