package check

import (
	"context"
	"net"
	"slices"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// configFacts are what webhook-configuration found: the entries, what
// keeps each that is wrong from sending Kyma Pods to the webhook, and the
// emergency-disable marker.
type configFacts struct {
	Config
	Names   []string
	Wrong   []entryFaults
	Disable disableFacts
}

// entryFaults are why the API server does not call an entry for a Pod
// CREATE in a Kyma namespace, or would block it when the call fails.
type entryFaults struct {
	Name          string
	NoPodCreate   bool
	WrongPolicy   bool
	FailurePolicy admissionregistrationv1.FailurePolicyType
	SelectorErr   error
	Unselected    bool
	Selector      string
}

// checkWebhookConfiguration checks what decides whether the API server calls
// the webhook for a Kyma Pod, and what a failed call does; not the caBundle.
// The emergency-disable marker makes a missing MWC a WARN, and is itself a
// WARN beside an MWC that is right.
func checkWebhookConfiguration(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	err error, disable disableFacts) Result {
	return decideWebhookConfiguration(cfg, mwc, err, disable).result(IDWebhookConfiguration)
}

func decideWebhookConfiguration(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	err error, disable disableFacts) found {
	facts := configFacts{Config: cfg, Disable: disable}
	switch {
	case apierrors.IsNotFound(err):
		return judgeMissingConfiguration(facts)
	case err != nil:
		res, _ := unreadable("get MutatingWebhookConfiguration "+cfg.WebhookConfiguration,
			"MutatingWebhookConfiguration "+cfg.WebhookConfiguration, err)
		return res
	case len(mwc.Webhooks) == 0:
		return judged(StatusFail, keyConfigEmpty, facts)
	}
	// A namespace Kyma manages, as the API server sees it: the managed-by
	// label and the name label every namespace carries, here the webhook's.
	kyma := labels.Set{ManagedByLabel: ManagedByValue, corev1.LabelMetadataName: cfg.Namespace}
	for _, wh := range mwc.Webhooks {
		facts.Names = append(facts.Names, wh.Name)
		if faults := entryProblems(wh, kyma); faults.any() {
			facts.Wrong = append(facts.Wrong, faults)
		}
	}
	switch {
	case len(facts.Wrong) > 0:
		return judged(StatusFail, keyConfigWrong, facts)
	case disable.Present:
		return judged(StatusWarn, keyConfigMarkerLeft, facts)
	}
	return judged(StatusPass, keyConfigRight, facts)
}

func (e entryFaults) any() bool {
	return e.NoPodCreate || e.WrongPolicy || e.SelectorErr != nil || e.Unselected
}

func entryProblems(wh admissionregistrationv1.MutatingWebhook, kyma labels.Set) entryFaults {
	faults := entryFaults{Name: wh.Name, NoPodCreate: !coversPodCreate(wh.Rules)}
	// The v1 API defaults failurePolicy to Fail on write, so an object read
	// from the API server always has one; a nil here is Fail too.
	if fp := ptr.Deref(wh.FailurePolicy, ""); fp != admissionregistrationv1.Ignore {
		faults.WrongPolicy, faults.FailurePolicy = true, fp
	}
	sel, err := namespaceSelectorOf(wh)
	switch {
	case err != nil:
		faults.SelectorErr = err
	case !sel.Matches(kyma):
		faults.Unselected, faults.Selector = true, sel.String()
	}
	return faults
}

// coversPodCreate reports whether a rule matches a CREATE of a core v1 Pod
// as the API server matches: wildcards count, Cluster scope never matches.
func coversPodCreate(rules []admissionregistrationv1.RuleWithOperations) bool {
	return slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
		return containsAny(r.Operations, admissionregistrationv1.Create, admissionregistrationv1.OperationAll) &&
			containsAny(r.APIGroups, "", "*") &&
			containsAny(r.APIVersions, "v1", "*") &&
			containsAny(r.Resources, "pods", "*", "*/*") &&
			(r.Scope == nil || *r.Scope != admissionregistrationv1.ClusterScope)
	})
}

func containsAny[T comparable](list []T, values ...T) bool {
	return slices.ContainsFunc(values, func(v T) bool { return slices.Contains(list, v) })
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
// webhook-endpoints and served-certificate both. The flags say why the API
// server cannot call the entry.
type entryTarget struct {
	Entry                    admissionregistrationv1.MutatingWebhook
	Ref                      *admissionregistrationv1.ServiceReference
	Port                     int32
	Path                     string
	BadPath                  bool // the webhook does not serve it
	Missing, NoPort, NoReady bool // the Service, its port, its ready endpoints
	Denied                   bool // the Service may not be read
	Ready                    []endpoint
	ours                     bool  // Ref names the webhook's own Service
	err                      error // a read that failed
}

// endpoint is a ready host:port and the Pod behind it, if known.
type endpoint struct{ addr, pod string }

// serverName is the name the API server verifies the served certificate for.
func (t entryTarget) serverName() string { return t.Ref.Name + "." + t.Ref.Namespace + ".svc" }

func (t entryTarget) broken() bool { return t.BadPath || t.Missing || t.NoPort || t.NoReady }

// resolveEntries follows each entry to its Service's ready endpoints.
func resolveEntries(ctx context.Context, client kubernetes.Interface, cfg Config,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration) []entryTarget {
	if mwc == nil {
		return nil
	}
	targets := make([]entryTarget, len(mwc.Webhooks))
	for i, wh := range mwc.Webhooks {
		t := &targets[i]
		t.Entry, t.Ref = wh, wh.ClientConfig.Service
		if t.Ref == nil {
			continue
		}
		t.Port, t.Path = ptr.Deref(t.Ref.Port, 443), ptr.Deref(t.Ref.Path, "/")
		t.ours = t.Ref.Namespace == cfg.Namespace && t.Ref.Name == cfg.WebhookService
		t.BadPath = t.ours && t.Path != webhookpath.MutatePod && t.Path != webhookpath.MutatePodLegacy
		t.resolve(ctx, client)
	}
	return targets
}

// resolve reads the entry's Service and the ready endpoints of its port.
func (t *entryTarget) resolve(ctx context.Context, client kubernetes.Interface) {
	ns, name := t.Ref.Namespace, t.Ref.Name
	svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if t.Missing = apierrors.IsNotFound(err); t.Missing {
		return
	}
	if t.err = err; err != nil {
		return
	}
	j := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == t.Port })
	if t.NoPort = j < 0; t.NoPort {
		return
	}
	selector := discoveryv1.LabelServiceName + "=" + name
	list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if t.err = err; err != nil {
		return
	}
	for _, s := range list.Items {
		t.Ready = append(t.Ready, readyEndpoints(s, svc.Spec.Ports[j].Name)...)
	}
	t.NoReady = len(t.Ready) == 0
}

// readyEndpoints returns s's ready addresses for the Service port portName;
// an endpoint with no ready condition is ready, as the API defines it.
func readyEndpoints(s discoveryv1.EndpointSlice, portName string) []endpoint {
	i := slices.IndexFunc(s.Ports, func(p discoveryv1.EndpointPort) bool {
		return p.Port != nil && ptr.Deref(p.Name, "") == portName
	})
	if i < 0 {
		return nil
	}
	var out []endpoint
	for _, e := range s.Endpoints {
		if len(e.Addresses) == 0 || !ptr.Deref(e.Conditions.Ready, true) {
			continue
		}
		ep := endpoint{addr: net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*s.Ports[i].Port)))}
		if e.TargetRef != nil {
			ep.pod = e.TargetRef.Name
		}
		out = append(out, ep)
	}
	return out
}

// endpointsFacts are what webhook-endpoints found: the entries that
// cannot be called, those of another system, and those that can.
type endpointsFacts struct {
	Config
	MWCMissing            bool
	Broken, Foreign, Fine []entryTarget
}

// checkWebhookEndpoints fails on each entry the API server cannot call, and
// warns about entries that call another system, such as leftovers.
func checkWebhookEndpoints(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error,
	targets []entryTarget) Result {
	return decideWebhookEndpoints(cfg, mwc, mwcErr, targets).result(IDWebhookEndpoints)
}

func decideWebhookEndpoints(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error,
	targets []entryTarget) found {
	facts := endpointsFacts{Config: cfg, MWCMissing: apierrors.IsNotFound(mwcErr)}
	if mwc == nil {
		return blocked(keyEndpointsNoMWC, facts, IDWebhookConfiguration)
	}
	for _, t := range targets {
		switch {
		case denied(t.err) && !t.ours:
			t.Denied = true
			facts.Foreign = append(facts.Foreign, t)
		case t.err != nil:
			res, _ := unreadable("get Services and list EndpointSlices in "+t.Ref.Namespace,
				"Service "+t.Ref.Namespace+"/"+t.Ref.Name, t.err)
			return res
		case t.broken() && (t.ours || t.Missing):
			facts.Broken = append(facts.Broken, t)
		case !t.ours:
			facts.Foreign = append(facts.Foreign, t)
		default:
			facts.Fine = append(facts.Fine, t)
		}
	}
	switch {
	case len(facts.Broken) > 0:
		return judged(StatusFail, keyEndpointsBroken, facts)
	case !slices.ContainsFunc(targets, func(t entryTarget) bool { return t.ours }):
		return judged(StatusFail, keyEndpointsNotOurs, facts)
	case len(facts.Foreign) > 0:
		return judged(StatusWarn, keyEndpointsForeign, facts)
	}
	return judged(StatusPass, keyEndpointsReady, facts)
}

// namespaceFacts are what namespace found: the entries whose
// namespaceSelector selects the namespace, and those that exclude it.
type namespaceFacts struct {
	Config
	MWCMissing bool
	Selecting  []string
	Excluding  []exclusion
}

// exclusion is an entry whose namespaceSelector does not select the namespace.
type exclusion struct {
	Name, Selector string
	Err            error // the selector is invalid
}

// checkNamespace answers "why did my Pod not get the affinity" for the
// target namespace by evaluating each entry's namespaceSelector.
func checkNamespace(ctx context.Context, client kubernetes.Interface, cfg Config,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	return decideNamespace(ctx, client, cfg, mwc, mwcErr).result(IDNamespace)
}

func decideNamespace(ctx context.Context, client kubernetes.Interface, cfg Config,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) found {
	facts := namespaceFacts{Config: cfg, MWCMissing: apierrors.IsNotFound(mwcErr)}
	name := cfg.TargetNamespace
	ns, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return judged(StatusFail, keyNamespaceMissing, facts)
	}
	if res, failed := unreadable("get Namespace "+name, "Namespace "+name, err); failed {
		return res
	}
	if mwc == nil {
		return blocked(keyNamespaceNoMWC, facts, IDWebhookConfiguration)
	}
	set := labels.Set(ns.Labels)
	for _, wh := range mwc.Webhooks {
		sel, err := namespaceSelectorOf(wh)
		switch {
		case err != nil:
			facts.Excluding = append(facts.Excluding, exclusion{Name: wh.Name, Err: err})
		case sel.Matches(set):
			facts.Selecting = append(facts.Selecting, wh.Name)
		default:
			facts.Excluding = append(facts.Excluding, exclusion{Name: wh.Name, Selector: sel.String()})
		}
	}
	switch {
	case len(facts.Selecting) > 0:
		return judged(StatusPass, keyNamespaceSent, facts)
	case set.Get(ManagedByLabel) != ManagedByValue:
		return judged(StatusWarn, keyNamespaceUnlabelled, facts)
	}
	return judged(StatusWarn, keyNamespaceExcluded, facts)
}
