package check

import (
	"context"
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
	small := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("8Mi"),
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "admission-probe-", Labels: map[string]string{"app.kubernetes.io/name": "kim-snatch-check"},
		},
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

// admissionFacts are what admission found: how the dry run went, the
// terms on the pool key it came back with, and the pool the webhook prefers.
type admissionFacts struct {
	Config
	MWCMissing    bool
	Took, Timeout time.Duration
	TimedOut      bool
	Err           error
	Pool, PoolPod string
	Terms         []corev1.PreferredSchedulingTerm
	Disable       disableFacts
}

// checkAdmission creates probePod as a server-side dry run: admitted as a
// real Pod, through the webhook, and not stored.
func checkAdmission(ctx context.Context, client kubernetes.Interface, cfg Config,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error, disable disableFacts) Result {
	return decideAdmission(ctx, client, cfg, mwc, mwcErr, disable).result(IDAdmission)
}

func decideAdmission(ctx context.Context, client kubernetes.Interface, cfg Config,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error, disable disableFacts) found {
	ns := cfg.AdmissionNamespace
	start := time.Now()
	p, err := client.CoreV1().Pods(ns).Create(ctx, probePod(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	took := time.Since(start)
	facts := admissionFacts{Config: cfg, MWCMissing: apierrors.IsNotFound(mwcErr), Took: took.Round(time.Millisecond),
		Disable: disable}
	facts.Err = err
	switch {
	case apierrors.IsUnauthorized(err) ||
		apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource"):
		res, _ := unreadable("create Pods in "+ns, "", err)
		return res
	case apierrors.IsNotFound(err):
		return judged(StatusFail, keyAdmissionNoNamespace, facts)
	case err != nil:
		return judged(StatusFail, keyAdmissionRefused, facts)
	}
	facts.Pool, facts.PoolPod = webhookPool(ctx, client, cfg)
	if facts.Terms = poolTerms(p, cfg.PoolLabelKey); len(facts.Terms) > 0 {
		return judgeTerms(facts, mwc, mwcErr)
	}
	// The entry's timeout tells a call that waited it out from one that failed.
	if mwc != nil && len(mwc.Webhooks) > 0 {
		facts.Timeout = time.Duration(ptr.Deref(mwc.Webhooks[0].TimeoutSeconds, 0)) * time.Second
	}
	facts.TimedOut = facts.Timeout > 0 && took >= facts.Timeout
	if facts.MWCMissing && disable.Present {
		// The emergency disable deleted the MWC: no term is its effect.
		return judged(StatusWarn, keyAdmissionDisabled, facts)
	}
	return judged(StatusFail, keyAdmissionNoTerm, facts)
}

// judgeTerms passes the dry-run Pod only when it carries the webhook's own
// term, as the webhook adds it: one preferred term on the pool key, that
// one expression, In [pool], where pool is the webhook's --worker-pool.
// Any term on the key is not enough: the webhook leaves a Pod alone that
// already names the key, so a term that another webhook adds, such as the
// old kim-snatch's during a migration, or one for another pool, would
// otherwise pass for the webhook's. A term of the right shape is the
// webhook's only when an entry of the MWC calls the webhook's Service;
// kim-snatch's term has the same shape.
func judgeTerms(facts admissionFacts, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) found {
	facts.Err = mwcErr
	switch {
	case len(facts.Terms) > 1:
		return judged(StatusFail, keyAdmissionTwoTerms, facts)
	case !isWebhookTerm(facts.Terms[0], facts.PoolLabelKey, facts.Pool):
		return judged(StatusFail, keyAdmissionOtherTerm, facts)
	case apierrors.IsNotFound(mwcErr):
		return judged(StatusFail, keyAdmissionNoMWC, facts)
	case denied(mwcErr):
		return judged(StatusSkip, keyAdmissionMWCDenied, facts)
	case mwcErr != nil:
		return blocked(keyAdmissionMWCFailed, facts, IDWebhookConfiguration)
	}
	calls := func(wh admissionregistrationv1.MutatingWebhook) bool { return callsService(wh, facts.Config) }
	if !slices.ContainsFunc(mwc.Webhooks, calls) {
		return judged(StatusFail, keyAdmissionNotCalled, facts)
	}
	return judged(StatusPass, keyAdmissionTerm, facts)
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
		onKey := func(e corev1.NodeSelectorRequirement) bool { return e.Key == key }
		if slices.ContainsFunc(t.Preference.MatchExpressions, onKey) {
			out = append(out, t)
		}
	}
	return out
}

// hasPreferredTerm reports whether one of p's preferred terms has an
// expression on key that match accepts.
func hasPreferredTerm(p *corev1.Pod, key string, match func(corev1.NodeSelectorRequirement) bool) bool {
	if p == nil || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return false
	}
	for _, t := range p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if slices.ContainsFunc(t.Preference.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
			return e.Key == key && match(e)
		}) {
			return true
		}
	}
	return false
}
