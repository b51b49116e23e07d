package check

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// checkWebhookConfiguration checks the parts of each entry that decide
// whether the API server calls the webhook for a Kyma Pod, and what happens
// when the call fails. The caBundle is ca-bundle's concern.
func checkWebhookConfiguration(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, err error) Result {
	what := "MutatingWebhookConfiguration " + cfg.WebhookConfiguration
	apply := "Apply the webhook's manifests again (kubectl apply -k deploy/webhook); the syncer never creates or edits anything but the caBundle"
	switch {
	case isNotFound(err):
		return Result{
			ID:          IDWebhookConfiguration,
			Status:      StatusFail,
			Message:     what + " not found; the API server calls no webhook for Pods",
			Remediation: apply + "; or fix --webhook-configuration.",
		}
	case err != nil:
		return readFailure(IDWebhookConfiguration, what, err)
	case len(mwc.Webhooks) == 0:
		return Result{ID: IDWebhookConfiguration, Status: StatusFail, Message: what + " has no webhook entries", Remediation: apply + "."}
	}
	kyma := kymaNamespaceLabels(cfg)
	var wrong, names []string
	for _, wh := range mwc.Webhooks {
		names = append(names, wh.Name)
		if problems := entryProblems(wh, kyma); len(problems) > 0 {
			wrong = append(wrong, fmt.Sprintf("entry %s: %s", wh.Name, strings.Join(problems, ", ")))
		}
	}
	if len(wrong) > 0 {
		return Result{
			ID:          IDWebhookConfiguration,
			Status:      StatusFail,
			Message:     oneLine(what + ": " + strings.Join(wrong, "; ")),
			Remediation: apply + ", or compare with deploy/webhook/mutatingwebhookconfiguration.yaml.",
		}
	}
	return Result{
		ID:     IDWebhookConfiguration,
		Status: StatusPass,
		Message: fmt.Sprintf("%s: %s (%s) send Pod CREATE in namespaces labelled %s=%s to the webhook, failurePolicy Ignore",
			what, entries(len(mwc.Webhooks)), strings.Join(names, ", "), ManagedByLabel, ManagedByValue),
	}
}

// kymaNamespaceLabels are the labels of a namespace Kyma manages, as the
// API server sees them: the managed-by label and the name label every
// namespace carries, here the webhook's own namespace.
func kymaNamespaceLabels(cfg Config) labels.Set {
	return labels.Set{ManagedByLabel: ManagedByValue, corev1.LabelMetadataName: cfg.Namespace}
}

// entryProblems lists what keeps an entry from doing its job.
func entryProblems(wh admissionregistrationv1.MutatingWebhook, kyma labels.Set) []string {
	var problems []string
	if !coversPodCreate(wh.Rules) {
		problems = append(problems, "rules do not cover CREATE of pods in the core group, v1")
	}
	switch {
	case wh.FailurePolicy == nil:
		// The v1 API defaults it to Fail on write, so an object read from
		// the API server always has one; a nil here is Fail too.
		problems = append(problems, "failurePolicy is unset (Fail), want Ignore: a webhook outage would block Pod creation")
	case *wh.FailurePolicy != admissionregistrationv1.Ignore:
		problems = append(problems, fmt.Sprintf("failurePolicy is %s, want Ignore: a webhook outage would block Pod creation", *wh.FailurePolicy))
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

// coversPodCreate reports whether one of the rules matches a CREATE of a
// Pod through the core v1 API, wildcards included, as the API server
// matches them. A rule scoped to cluster-wide resources never matches Pods.
func coversPodCreate(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		ops := make([]string, 0, len(r.Operations))
		for _, op := range r.Operations {
			ops = append(ops, string(op))
		}
		if containsAny(ops, string(admissionregistrationv1.Create), string(admissionregistrationv1.OperationAll)) &&
			containsAny(r.APIGroups, "", "*") &&
			containsAny(r.APIVersions, "v1", "*") &&
			containsAny(r.Resources, "pods", "*", "*/*") &&
			(r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope) {
			return true
		}
	}
	return false
}

func containsAny(list []string, values ...string) bool {
	for _, v := range values {
		if slices.Contains(list, v) {
			return true
		}
	}
	return false
}
