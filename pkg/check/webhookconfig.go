package check

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// reinstall is check's one advice for putting back what an installation
// shipped: apply again, server-side, what installed it, the release's
// install.yaml or the operator's overlay of it, as docs/operations.md
// ("Install") installs. It names no file of a checkout, since check runs
// from the CronJob and the kubectl plugin, and never the bases in deploy/:
// their image is a placeholder that no registry holds, so applying them
// replaces a working Deployment with one that cannot pull its image.
func reinstall(binary string) string {
	return fmt.Sprintf("apply the %[1]s release you installed again, server-side: kubectl apply --server-side -f install.yaml of the GitHub release %[1]s/<version> you run, "+
		"or kubectl apply --server-side -k <your overlay> if one installed it (docs/operations.md, \"Install\"); add --force-conflicts to take back fields changed by hand", binary)
}

// checkWebhookConfiguration checks what decides whether the API server calls
// the webhook for a Kyma Pod, and what a failed call does; not the caBundle.
func checkWebhookConfiguration(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, err error) Result {
	what := "MutatingWebhookConfiguration " + cfg.WebhookConfiguration
	apply := "The syncer never creates or edits anything but the caBundle: " + reinstall("snatch-webhook")
	switch {
	case apierrors.IsNotFound(err):
		return fail(IDWebhookConfiguration, what+" not found; the API server calls no webhook for Pods", apply+"; or fix --webhook-configuration.")
	case err != nil:
		res, _ := unreadable(IDWebhookConfiguration, "get MutatingWebhookConfiguration "+cfg.WebhookConfiguration, what, err)
		return res
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
		return fail(IDWebhookConfiguration, what+": "+strings.Join(wrong, "; "), apply+", or compare the MWC with the one in that install.yaml.")
	}
	count := fmt.Sprintf("%d entries", len(mwc.Webhooks))
	if len(mwc.Webhooks) == 1 {
		count = "1 entry"
	}
	return pass(IDWebhookConfiguration, fmt.Sprintf("%s: %s (%s) send Pod CREATE in namespaces labelled %s=%s to the webhook, failurePolicy Ignore",
		what, count, strings.Join(names, ", "), ManagedByLabel, ManagedByValue))
}

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

// namespaceSelectorOf returns the selector the API server applies: it
// defaults a missing one to {}, which matches every namespace, whereas
// metav1.LabelSelectorAsSelector turns nil into one that matches nothing.
func namespaceSelectorOf(wh admissionregistrationv1.MutatingWebhook) (labels.Selector, error) {
	if wh.NamespaceSelector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(wh.NamespaceSelector)
}

// entryTarget is where the API server sends the calls of one webhook entry:
// the Service it names (nil for a URL), the port (443 when unset) and path
// (/ when unset), and the ready endpoints behind the port, read once for
// webhook-endpoints and served-certificate both.
type entryTarget struct {
	entry    admissionregistrationv1.MutatingWebhook
	ref      *admissionregistrationv1.ServiceReference
	port     int32
	path     string
	ours     bool     // ref names the webhook's own Service
	problems []string // why the API server cannot call the entry
	missing  bool     // the Service does not exist
	err      error    // a read that failed
	ready    []endpoint
}

// endpoint is a ready host:port and its name in messages, with its Pod.
type endpoint struct{ addr, name string }

// serverName is the name the API server verifies the served certificate for.
func (t entryTarget) serverName() string { return t.ref.Name + "." + t.ref.Namespace + ".svc" }

func (t entryTarget) describe() string {
	if t.ref == nil {
		return "entry " + t.entry.Name + " (URL)"
	}
	return fmt.Sprintf("entry %s → Service %s/%s port %d path %s", t.entry.Name, t.ref.Namespace, t.ref.Name, t.port, t.path)
}

// resolveEntries follows each entry to its Service's ready endpoints.
func resolveEntries(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration) []entryTarget {
	if mwc == nil {
		return nil
	}
	targets := make([]entryTarget, len(mwc.Webhooks))
	for i, wh := range mwc.Webhooks {
		t := &targets[i]
		t.entry, t.ref = wh, wh.ClientConfig.Service
		if t.ref == nil {
			continue
		}
		ns, name := t.ref.Namespace, t.ref.Name
		t.port, t.path = ptr.Deref(t.ref.Port, 443), ptr.Deref(t.ref.Path, "/")
		t.ours = ns == cfg.Namespace && name == cfg.WebhookService
		if t.ours && t.path != webhookpath.MutatePod && t.path != webhookpath.MutatePodLegacy {
			t.problems = append(t.problems, fmt.Sprintf("calls path %s, which the webhook does not serve (%s, %s)", t.path, webhookpath.MutatePod, webhookpath.MutatePodLegacy))
		}
		svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			t.problems, t.missing = append(t.problems, fmt.Sprintf("Service %s/%s does not exist", ns, name)), true
			continue
		}
		if t.err = err; err != nil {
			continue
		}
		j := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == t.port })
		if j < 0 {
			t.problems = append(t.problems, fmt.Sprintf("Service %s/%s has no port %d", ns, name, t.port))
			continue
		}
		list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if t.err = err; err != nil {
			continue
		}
		for _, s := range list.Items {
			t.ready = append(t.ready, readyEndpoints(s, svc.Spec.Ports[j].Name)...)
		}
		if len(t.ready) == 0 {
			t.problems = append(t.problems, fmt.Sprintf("Service %s/%s has no ready endpoint for port %d", ns, name, t.port))
		}
	}
	return targets
}

// readyEndpoints returns s's ready addresses for the Service port portName;
// an endpoint with no ready condition is ready, as the API defines it.
func readyEndpoints(s discoveryv1.EndpointSlice, portName string) []endpoint {
	i := slices.IndexFunc(s.Ports, func(p discoveryv1.EndpointPort) bool { return p.Port != nil && ptr.Deref(p.Name, "") == portName })
	if i < 0 {
		return nil
	}
	var out []endpoint
	for _, e := range s.Endpoints {
		if len(e.Addresses) == 0 || !ptr.Deref(e.Conditions.Ready, true) {
			continue
		}
		ep := endpoint{addr: net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*s.Ports[i].Port)))}
		ep.name = ep.addr
		if e.TargetRef != nil && e.TargetRef.Name != "" {
			ep.name = fmt.Sprintf("%s (Pod %s)", ep.addr, e.TargetRef.Name)
		}
		out = append(out, ep)
	}
	return out
}

// checkWebhookEndpoints fails on each entry the API server cannot call, and
// warns about entries that call another system, such as leftovers.
func checkWebhookEndpoints(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error, targets []entryTarget) Result {
	if mwc == nil {
		return skipped(IDWebhookEndpoints, mwcAbsent(cfg, mwcErr), IDWebhookConfiguration)
	}
	var broken, foreign, fine []string
	for _, t := range targets {
		switch {
		case denied(t.err) && !t.ours:
			foreign = append(foreign, t.describe()+": Service not readable with these credentials")
		case denied(t.err):
			return notPermitted(IDWebhookEndpoints, "get Services and list EndpointSlices in "+t.ref.Namespace, t.err)
		case t.err != nil:
			return readFailure(IDWebhookEndpoints, "Service "+t.ref.Namespace+"/"+t.ref.Name, t.err)
		case len(t.problems) > 0 && (t.ours || t.missing):
			broken = append(broken, t.describe()+": "+strings.Join(t.problems, ", "))
		case !t.ours:
			foreign = append(foreign, strings.Join(append([]string{t.describe()}, t.problems...), ": "))
		default:
			fine = append(fine, fmt.Sprintf("%s: %d ready endpoints", t.describe(), len(t.ready)))
		}
	}
	switch {
	case len(broken) > 0:
		return fail(IDWebhookEndpoints, strings.Join(broken, "; "),
			"The API server admits these Pods without the term: to restore the Service and the entries, "+reinstall("snatch-webhook")+"; "+
				"and see \"Webhook unreachable\" in docs/troubleshooting.md for endpoints that are not ready.")
	case !slices.ContainsFunc(targets, func(t entryTarget) bool { return t.ours }):
		return fail(IDWebhookEndpoints, fmt.Sprintf("no entry of %s calls Service %s/%s", cfg.WebhookConfiguration, cfg.Namespace, cfg.WebhookService),
			reinstall("snatch-webhook")+"; or fix --webhook-service.")
	case len(foreign) > 0:
		return warn(IDWebhookEndpoints, fmt.Sprintf("%s; entries of another system: %s", strings.Join(fine, "; "), strings.Join(foreign, "; ")),
			"Remove the other entries, such as an earlier installation's: kubectl edit mutatingwebhookconfiguration "+cfg.WebhookConfiguration+" (docs/migration.md).")
	}
	return pass(IDWebhookEndpoints, strings.Join(fine, "; "))
}

// checkNamespace answers "why did my Pod not get the affinity" for the
// target namespace by evaluating each entry's namespaceSelector.
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
		"The namespace is excluded on purpose (kube-system) or the selector was changed; compare with the MWC in snatch-webhook's install.yaml. To exclude single Pods use "+optOut+" instead.")
}
