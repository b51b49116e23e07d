package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// DefaultAdmissionNamespace is the namespace of deploy/syncer/check.yaml in
// which the check identity may create Pods, for the dry run alone.
const DefaultAdmissionNamespace = "kim-snatch-check"

// probePod is the smallest Pod the namespace's restricted Pod Security and
// ResourceQuota admit: the admission plugins run on a dry run as on a real
// create, after the mutating webhooks.
func probePod() *corev1.Pod {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "admission-probe-", Labels: map[string]string{"app.kubernetes.io/name": "kim-snatch-check"}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "probe", Image: "registry.k8s.io/pause:3.10", // a dry run never pulls it
				Resources: corev1.ResourceRequirements{Requests: small, Limits: small},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// checkAdmission creates probePod as a server-side dry run: admitted as a
// real Pod, through the webhook, and not stored.
func checkAdmission(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration) Result {
	ns := cfg.AdmissionNamespace
	start := time.Now()
	p, err := client.CoreV1().Pods(ns).Create(ctx, probePod(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	took := time.Since(start)
	ms := took.Round(time.Millisecond)
	switch {
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource"):
		return notPermitted(IDAdmission, "create Pods in "+ns, err)
	case apierrors.IsNotFound(err):
		return fail(IDAdmission, fmt.Sprintf("namespace %s, where the dry run goes, not found: %v", ns, err),
			"Apply deploy/syncer again (kubectl apply -k deploy/syncer): it ships the namespace, or set --admission-namespace.")
	case err != nil:
		return fail(IDAdmission, fmt.Sprintf("dry-run create of a Pod in %s refused after %s: %v", ns, ms, err),
			"The namespace's admission rejected the probe Pod: compare its ResourceQuota, LimitRange and Pod Security labels with deploy/syncer/check.yaml, and list what runs there (kubectl -n "+ns+" get pods).")
	}
	if term, ok := preferredTerm(p, cfg.PoolLabelKey, nil); ok {
		return pass(IDAdmission, fmt.Sprintf("a dry-run Pod in %s came back with the term %s in %s", ns, term, ms))
	}
	var timeout time.Duration // the entry's, to tell a call that waited it out from one that failed
	if mwc != nil && len(mwc.Webhooks) > 0 {
		timeout = time.Duration(ptr.Deref(mwc.Webhooks[0].TimeoutSeconds, 0)) * time.Second
	}
	why := "the API server could not call the webhook or did not send it the Pod: a caBundle it does not trust, no endpoint, a NetworkPolicy, or a namespaceSelector that skips " + ns
	if timeout > 0 && took >= timeout {
		why = fmt.Sprintf("the call waited out the timeout of %s: the webhook accepts connections but does not answer (a frozen replica, or a network path that drops the answers)", timeout)
	}
	return fail(IDAdmission, fmt.Sprintf("a dry-run Pod in %s came back without the term on %s after %s: %s", ns, cfg.PoolLabelKey, ms, why),
		"Every Kyma Pod is admitted so now. Read the other items for the cause; with all of them PASS, see \"Webhook unreachable\" in docs/troubleshooting.md (kube-apiserver log, NetworkPolicies, the path to the webhook's Service).")
}

// preferredTerm describes the first expression on key in p's preferred
// terms that match accepts (nil accepts any), with the term's weight.
func preferredTerm(p *corev1.Pod, key string, match func(corev1.NodeSelectorRequirement) bool) (string, bool) {
	if p == nil || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return "", false
	}
	for _, t := range p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		for _, e := range t.Preference.MatchExpressions {
			if e.Key == key && (match == nil || match(e)) {
				return fmt.Sprintf("%s %s %v (weight %d)", e.Key, e.Operator, e.Values, t.Weight), true
			}
		}
	}
	return "", false
}
