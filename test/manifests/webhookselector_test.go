package manifests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// createFailingWebhookCopy creates, until t ends, a copy of the webhook
// configuration with failurePolicy Fail, confined to the namespaces that
// carry runLabel=runID, and returns its webhook.
func createFailingWebhookCopy(t *testing.T, env *apiEnv, objs []*unstructured.Unstructured, runLabel string) *admissionregistrationv1.MutatingWebhook {
	t.Helper()
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	typed(t, find(t, objs, "MutatingWebhookConfiguration", webhookConfiguration), &mwc)
	mwc.Name = "kim-snatch-selector-test-" + runID
	mwc.Labels = nil
	mwc.Webhooks[0].FailurePolicy = ptr(admissionregistrationv1.Fail)
	sel := mwc.Webhooks[0].NamespaceSelector
	sel.MatchExpressions = append(sel.MatchExpressions,
		metav1.LabelSelectorRequirement{Key: runLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{runID}})
	ctx := t.Context()
	if _, err := env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &mwc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the test copy of the webhook configuration: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), mwc.Name, metav1.DeleteOptions{})
	})
	return &mwc.Webhooks[0]
}

// createProbeNamespaces creates a Kyma-managed and an unmanaged namespace,
// and kube-system labelled managed on the test's own control plane, each
// with its default ServiceAccount, and returns the first two and all.
func createProbeNamespaces(t *testing.T, env *apiEnv, runLabel string) (managed, unmanaged string, namespaces []string) {
	t.Helper()
	managed, unmanaged = "kim-snatch-managed-"+runID, "kim-snatch-unmanaged-"+runID
	env.namespace(t, managed, map[string]string{managedByLabel: "kyma", runLabel: runID})
	env.namespace(t, unmanaged, map[string]string{runLabel: runID})
	namespaces = []string{managed, unmanaged}
	if !env.cluster.External() {
		// kube-system with Kyma's label must still be skipped. Only on the
		// test's own control plane: a real kube-system is left alone.
		env.namespace(t, "kube-system", map[string]string{managedByLabel: "kyma", runLabel: runID})
		namespaces = append(namespaces, "kube-system")
	}
	ctx := t.Context()
	for _, ns := range namespaces {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
		if _, err := env.cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return managed, unmanaged, namespaces
}

// The API server decides which Pods reach the webhook; this asks it. A copy
// of the webhook configuration with failurePolicy Fail and no webhook behind
// it rejects exactly the Pods it would send to the webhook, so a rejection
// means "called" and an admission means "not called". An extra namespace
// selector term confines the copy to this test's namespaces.
func TestWebhookConfigurationSelectsOnlyKymaPods(t *testing.T) {
	env := apiServer(t)
	const runLabel = "kim-snatch.kyma-project.io/test-run"
	objs := render(t, defaultInstall)

	w := createFailingWebhookCopy(t, env, objs, runLabel)
	managed, unmanaged, namespaces := createProbeNamespaces(t, env, runLabel)
	webhookPod := deployment(t, objs, "snatch-webhook").Spec.Template.Labels
	syncerPod := deployment(t, objs, "cabundle-syncer").Spec.Template.Labels

	called := func(ctx context.Context, ns, node string, labels, annotations map[string]string) (bool, error) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns, Labels: labels, Annotations: annotations},
			Spec: corev1.PodSpec{
				NodeName:                     node,
				AutomountServiceAccountToken: ptr(false),
				Containers:                   []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		_, err := env.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err == nil:
			return false, nil
		case strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", w.Name)):
			return true, nil
		default:
			return false, err
		}
	}
	// The API server picks up a new configuration within moments.
	poll.Eventually(t, "the API server to call the webhook", func(ctx context.Context) error {
		if ok, err := called(ctx, managed, "", nil, nil); !ok {
			return fmt.Errorf("the webhook is not called for a plain Pod in %s (%v)", managed, err)
		}
		return nil
	})

	tests := []struct {
		name        string
		namespace   string
		nodeName    string
		labels      map[string]string
		annotations map[string]string
		wantCalled  bool
	}{
		{name: "pod_in_kyma_managed_namespace_calls_the_webhook", namespace: managed, wantCalled: true},
		{name: "pod_in_unmanaged_namespace_skips_the_webhook", namespace: unmanaged},
		{name: "pod_in_kube_system_labelled_managed_skips_the_webhook", namespace: "kube-system"},
		{name: "pod_opted_out_skips_the_webhook", namespace: managed, labels: map[string]string{optOutLabel: "true"}},
		{name: "pod_opt_out_false_calls_the_webhook", namespace: managed, labels: map[string]string{optOutLabel: "false"}, wantCalled: true},
		{name: "webhook_own_pod_skips_the_webhook", namespace: managed, labels: webhookPod},
		{name: "syncer_pod_calls_the_webhook", namespace: managed, labels: syncerPod, wantCalled: true},
		// A mirror Pod is bound to its node. The configuration has no
		// matchCondition for it: the webhook is called and answers a bound
		// Pod with no patch (test/bench's differential check shows the
		// created mirror Pod unchanged).
		{name: "mirror_pod_calls_the_webhook", namespace: managed, nodeName: "node-1", annotations: map[string]string{corev1.MirrorPodAnnotationKey: "checksum"}, wantCalled: true},
		{name: "pod_bound_to_a_node_calls_the_webhook", namespace: managed, nodeName: "node-1", wantCalled: true},
		{name: "pod_with_other_annotations_calls_the_webhook", namespace: managed, annotations: map[string]string{"example.com/note": "x"}, wantCalled: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Contains(namespaces, tt.namespace) {
				t.Skipf("namespace %s is not the test's own on an existing cluster", tt.namespace)
			}
			got, err := called(t.Context(), tt.namespace, tt.nodeName, tt.labels, tt.annotations)
			if err != nil {
				t.Fatalf("create Pod: %v", err)
			}
			if got != tt.wantCalled {
				t.Fatalf("webhook called = %v, want %v", got, tt.wantCalled)
			}
		})
	}
}
