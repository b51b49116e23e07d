package check

import (
	"context"
	"fmt"
	"slices"
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
func checkAdmission(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
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
			"The syncer's release ships the namespace with the check's identity: "+reinstall("cabundle-syncer")+"; or set --admission-namespace.")
	case err != nil:
		return fail(IDAdmission, fmt.Sprintf("dry-run create of a Pod in %s refused after %s: %v", ns, ms, err),
			"The namespace's admission rejected the probe Pod: compare its ResourceQuota, LimitRange and Pod Security labels with those of the syncer release's install.yaml (deploy/syncer/check.yaml), and list what runs there (kubectl -n "+ns+" get pods).")
	}
	pool, from := webhookPool(ctx, client, cfg)
	if terms := poolTerms(p, cfg.PoolLabelKey); len(terms) > 0 {
		return judgeTerms(cfg, mwc, mwcErr, ns, pool, from, terms, ms)
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

// judgeTerms passes the dry-run Pod only when it carries the webhook's own
// term, as the webhook adds it: one preferred term on the pool key, that
// one expression, In [pool], where pool is the webhook's --worker-pool
// (from says where it was read). Any term on the key is not enough: the
// webhook leaves a Pod alone that already names the key, so a term that
// another webhook adds, such as the old kim-snatch's during a migration,
// or one for another pool, would otherwise pass for the webhook's. A term
// of the right shape is the webhook's only when an entry of the MWC calls
// the webhook's Service; kim-snatch's term has the same shape.
func judgeTerms(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error, ns, pool, from string, terms []corev1.PreferredSchedulingTerm, took time.Duration) Result {
	got := make([]string, len(terms))
	for i, t := range terms {
		got[i] = describeTerm(t)
	}
	want := fmt.Sprintf("%s In [%s]", cfg.PoolLabelKey, pool)
	came := fmt.Sprintf("a dry-run Pod in %s came back after %s with %s", ns, took, strings.Join(got, " and "))
	switch {
	case len(terms) > 1:
		return fail(IDAdmission, fmt.Sprintf("%s: %d preferred terms on %s, where the webhook adds exactly one, %s (pool %s); more than one webhook mutates Kyma Pods",
			came, len(terms), cfg.PoolLabelKey, want, from),
			"Find the other webhook that adds a term on "+cfg.PoolLabelKey+" (kubectl get mutatingwebhookconfigurations), such as an old kim-snatch left behind, and remove it (docs/migration.md).")
	case !isWebhookTerm(terms[0], cfg.PoolLabelKey, pool):
		return fail(IDAdmission, fmt.Sprintf("%s, not the webhook's term %s (pool %s): another webhook added it, or the webhook prefers another pool than the one it was configured with",
			came, want, from),
			"Find the webhook that adds this term (kubectl get mutatingwebhookconfigurations), such as an old kim-snatch, and remove it (docs/migration.md); if the pool is the one wanted, set the webhook's --worker-pool to it.")
	}
	switch {
	case apierrors.IsNotFound(mwcErr):
		return fail(IDAdmission, fmt.Sprintf("%s, but MutatingWebhookConfiguration %s does not exist: another webhook added it", came, cfg.WebhookConfiguration),
			"Find the webhook that adds this term (kubectl get mutatingwebhookconfigurations), such as an old kim-snatch, and "+reinstall("snatch-webhook")+".")
	case denied(mwcErr):
		op := "get MutatingWebhookConfiguration " + cfg.WebhookConfiguration
		return result(IDAdmission, StatusSkip, fmt.Sprintf("%s; whose term it is was not seen: these credentials may not %s: %v", came, op, mwcErr), permittedRemediation(op))
	case mwcErr != nil:
		return skipped(IDAdmission, came+", but "+mwcAbsent(cfg, mwcErr)+" to tell whose term it is", IDWebhookConfiguration)
	}
	if !slices.ContainsFunc(mwc.Webhooks, func(wh admissionregistrationv1.MutatingWebhook) bool { return callsService(wh, cfg) }) {
		return fail(IDAdmission, fmt.Sprintf("%s, but no entry of MutatingWebhookConfiguration %s calls Service %s/%s: another webhook added it, such as the old kim-snatch before the migration switches the entry",
			came, cfg.WebhookConfiguration, cfg.Namespace, cfg.WebhookService),
			"Finish the migration (docs/migration.md), or "+reinstall("snatch-webhook")+".")
	}
	return pass(IDAdmission, fmt.Sprintf("a dry-run Pod in %s came back with the webhook's term %s in %s (pool %s)", ns, got[0], took, from))
}

// isWebhookTerm reports whether t is the term the webhook adds for pool,
// whatever its weight (--affinity-weight).
func isWebhookTerm(t corev1.PreferredSchedulingTerm, key, pool string) bool {
	e := t.Preference.MatchExpressions
	return len(t.Preference.MatchFields) == 0 && len(e) == 1 &&
		e[0].Key == key && e[0].Operator == corev1.NodeSelectorOpIn && slices.Equal(e[0].Values, []string{pool})
}

// callsService reports whether wh calls the webhook's own Service.
func callsService(wh admissionregistrationv1.MutatingWebhook, cfg Config) bool {
	ref := wh.ClientConfig.Service
	return ref != nil && ref.Namespace == cfg.Namespace && ref.Name == cfg.WebhookService
}

// poolTerms returns p's preferred terms that use key.
func poolTerms(p *corev1.Pod, key string) []corev1.PreferredSchedulingTerm {
	if p == nil || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return nil
	}
	var out []corev1.PreferredSchedulingTerm
	for _, t := range p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if slices.ContainsFunc(t.Preference.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool { return e.Key == key }) {
			out = append(out, t)
		}
	}
	return out
}

// describeTerm prints a term's expressions and weight.
func describeTerm(t corev1.PreferredSchedulingTerm) string {
	var exprs []string
	for _, e := range t.Preference.MatchExpressions {
		exprs = append(exprs, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
	}
	return fmt.Sprintf("%s (weight %d)", strings.Join(exprs, ", "), t.Weight)
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
