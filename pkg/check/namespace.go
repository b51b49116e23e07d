package check

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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
	kyma := ManagedByLabel + "=" + ManagedByValue
	optOut := affinity.OptOutLabel + "=" + affinity.OptOutValue
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
