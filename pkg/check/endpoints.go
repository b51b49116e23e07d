package check

import (
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
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/admission"
)

// defaultServicePort is the port the API server calls when an entry's
// service reference names none.
const defaultServicePort = 443

// entryTarget is where the API server sends the calls of one webhook
// entry: the Service it names, the port and path, and the endpoints behind
// the port that are ready now. resolveEntries reads each Service and its
// EndpointSlices once, for webhook-endpoints and served-certificate both.
type entryTarget struct {
	entry admissionregistrationv1.MutatingWebhook
	// ref is the entry's Service; nil for an entry that calls a URL.
	ref *admissionregistrationv1.ServiceReference
	// ours is true when ref names the webhook's own Service.
	ours bool
	// problems say why the API server cannot call the entry; empty when it
	// can.
	problems []string
	// missing is true when the Service does not exist.
	missing bool
	// forbidden and readErr are the first read that was refused or failed.
	forbidden, readErr error
	// ready are the endpoints the API server may dial, as host:port.
	ready []endpoint
}

// endpoint is one ready address of a Service port, and the Pod behind it.
type endpoint struct{ addr, pod string }

// serverName is the name the API server verifies the webhook's certificate
// for: <service>.<namespace>.svc.
func (t entryTarget) serverName() string { return t.ref.Name + "." + t.ref.Namespace + ".svc" }

// describe names the entry's target in a message.
func (t entryTarget) describe() string {
	if t.ref == nil {
		return "entry " + t.entry.Name + " (URL)"
	}
	return fmt.Sprintf("entry %s → Service %s/%s port %d path %s", t.entry.Name, t.ref.Namespace, t.ref.Name, portOf(t.ref), pathOf(t.ref))
}

// resolveEntries follows every entry of mwc to its Service and the
// Service's ready endpoints, as the API server does for each call.
func resolveEntries(ctx context.Context, client kubernetes.Interface, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration) []entryTarget {
	if mwc == nil {
		return nil
	}
	targets := make([]entryTarget, 0, len(mwc.Webhooks))
	for _, wh := range mwc.Webhooks {
		t := entryTarget{entry: wh, ref: wh.ClientConfig.Service}
		if t.ref != nil {
			t.ours = t.ref.Namespace == cfg.Namespace && t.ref.Name == cfg.WebhookService
			resolveService(ctx, client, &t)
		}
		targets = append(targets, t)
	}
	return targets
}

// resolveService fills in the problems and ready endpoints of t.
func resolveService(ctx context.Context, client kubernetes.Interface, t *entryTarget) {
	ns, name := t.ref.Namespace, t.ref.Name
	failed := func(err error) {
		if apierrors.IsForbidden(err) {
			t.forbidden = err
		} else {
			t.readErr = err
		}
	}
	if t.ours && !slices.Contains([]string{admission.Path, admission.PathLegacy}, pathOf(t.ref)) {
		t.problems = append(t.problems, fmt.Sprintf("calls path %s, which the webhook does not serve (%s, %s)", pathOf(t.ref), admission.Path, admission.PathLegacy))
	}
	svc, err := client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		t.problems = append(t.problems, fmt.Sprintf("Service %s/%s does not exist", ns, name))
		t.missing = true
		return
	case err != nil:
		failed(err)
		return
	}
	var port *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == portOf(t.ref) {
			port = &svc.Spec.Ports[i]
		}
	}
	if port == nil {
		t.problems = append(t.problems, fmt.Sprintf("Service %s/%s has no port %d", ns, name, portOf(t.ref)))
		return
	}
	list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
	if err != nil {
		failed(err)
		return
	}
	for _, s := range list.Items {
		t.ready = append(t.ready, readyEndpoints(s, port.Name)...)
	}
	if len(t.ready) == 0 {
		t.problems = append(t.problems, fmt.Sprintf("Service %s/%s has no ready endpoint for port %d", ns, name, port.Port))
	}
}

// readyEndpoints returns the ready addresses of slice s for the Service
// port named portName. An endpoint with no ready condition counts as
// ready, as the API defines it.
func readyEndpoints(s discoveryv1.EndpointSlice, portName string) []endpoint {
	var port *int32
	for _, p := range s.Ports {
		if p.Port != nil && (p.Name == nil && portName == "" || p.Name != nil && *p.Name == portName) {
			port = p.Port
		}
	}
	if port == nil {
		return nil
	}
	var out []endpoint
	for _, e := range s.Endpoints {
		if len(e.Addresses) == 0 || e.Conditions.Ready != nil && !*e.Conditions.Ready {
			continue
		}
		ep := endpoint{addr: net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(*port)))}
		if e.TargetRef != nil {
			ep.pod = e.TargetRef.Name
		}
		out = append(out, ep)
	}
	return out
}

// checkWebhookEndpoints answers whether the API server can reach the
// webhook for each entry: the Service the entry names exists, has the
// entry's port and ready endpoints behind it, and our entries call a path
// the webhook serves. Any of these missing makes the API server fail open
// on every call. An entry that calls another system is a leftover, such as
// an earlier installation's entry: a warning.
func checkWebhookEndpoints(cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, targets []entryTarget) Result {
	if mwc == nil {
		return Result{ID: IDWebhookEndpoints, Status: StatusSkip,
			Message:     fmt.Sprintf("MutatingWebhookConfiguration %s could not be read (see %s)", cfg.WebhookConfiguration, IDWebhookConfiguration),
			Remediation: "Fix the check named in the message first."}
	}
	var broken, foreign, fine []string
	ours := 0
	for _, t := range targets {
		switch {
		case t.forbidden != nil && !t.ours:
			foreign = append(foreign, t.describe()+": Service not readable with these credentials")
		case t.forbidden != nil:
			return notPermitted(IDWebhookEndpoints, "get Services and list EndpointSlices in "+t.ref.Namespace, t.forbidden)
		case t.readErr != nil:
			return readFailure(IDWebhookEndpoints, "Service "+t.ref.Namespace+"/"+t.ref.Name, t.readErr)
		case len(t.problems) > 0 && (t.ours || t.missing):
			broken = append(broken, t.describe()+": "+strings.Join(t.problems, ", "))
		case !t.ours:
			foreign = append(foreign, strings.Join(append([]string{t.describe()}, t.problems...), ": "))
		default:
			fine = append(fine, fmt.Sprintf("%s: %d ready endpoints", t.describe(), len(t.ready)))
		}
		if t.ours {
			ours++
		}
	}
	svc := cfg.Namespace + "/" + cfg.WebhookService
	switch {
	case len(broken) > 0:
		return Result{ID: IDWebhookEndpoints, Status: StatusFail,
			Message: oneLine(strings.Join(broken, "; ")),
			Remediation: "The API server admits these Pods without the term: apply deploy/webhook again (kubectl apply -k deploy/webhook) to restore the Service and the entries, " +
				"and see \"Webhook unreachable\" in docs/troubleshooting.md for endpoints that are not ready."}
	case ours == 0:
		return Result{ID: IDWebhookEndpoints, Status: StatusFail,
			Message:     fmt.Sprintf("no entry of %s calls Service %s", cfg.WebhookConfiguration, svc),
			Remediation: "Apply deploy/webhook again (kubectl apply -k deploy/webhook), or fix --webhook-service."}
	case len(foreign) > 0:
		return Result{ID: IDWebhookEndpoints, Status: StatusWarn,
			Message:     oneLine(fmt.Sprintf("%s; entries of another system: %s", strings.Join(fine, "; "), strings.Join(foreign, "; "))),
			Remediation: "Remove the other entries, such as an earlier installation's: kubectl edit mutatingwebhookconfiguration " + cfg.WebhookConfiguration + " (docs/migration.md)."}
	}
	return Result{ID: IDWebhookEndpoints, Status: StatusPass, Message: oneLine(strings.Join(fine, "; "))}
}

// portOf is the Service port an entry calls.
func portOf(ref *admissionregistrationv1.ServiceReference) int32 {
	if ref.Port == nil {
		return defaultServicePort
	}
	return *ref.Port
}

// pathOf is the path an entry calls; the API server calls / when none is
// set.
func pathOf(ref *admissionregistrationv1.ServiceReference) string {
	if ref.Path == nil {
		return "/"
	}
	return *ref.Path
}
