package stack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// CertificateName is the Gardener Certificate of
// deploy/webhook/certificate.yaml.
const CertificateName = "kim-snatch-webhook"

// requestedAtAnnotation is where cert-management keeps, on the Secret, the
// time of the request that issued it.
const requestedAtAnnotation = "cert.gardener.cloud/requestedAt"

// CertificateResource is Gardener cert-management's Certificate.
var CertificateResource = schema.GroupVersionResource{Group: "cert.gardener.cloud", Version: "v1alpha1", Resource: "certificates"}

// issueTimeout bounds an issuance or a renewal by the controller.
// cert-management v0.19.0 marks a request pending only after the goroutine
// that issues has started, and when that goroutine finishes first the mark
// outlives it: the controller then answers "challenge pending for at least
// one domain of certificate" and rechecks every 30 s until the mark expires
// after 5 minutes (pkg/shared/legobridge/pending.go in its module). The
// bound covers that.
const issueTimeout = 5*time.Minute + 2*time.Minute

// certPoll is how often a renewal's Secret and Certificate are read.
const certPoll = 20 * time.Millisecond

// Renewal is what one renewal by Gardener cert-management did.
type Renewal struct {
	// Before and After are the fingerprints of the Secret's CA.
	Before, After string
	// Requested is when spec.renew was set; SecretWritten is when the new
	// CA was first seen in the Secret, Ready when the Certificate was
	// first seen Ready with a new status.expirationDate. Both are polled
	// every certPoll.
	Requested, SecretWritten, Ready time.Time
	// States are the Certificate's states seen, in order, without repeats.
	States []string
}

// Renew renews the Certificate the way cert-management documents, with
// spec.renew: true, and waits until the controller has written a new CA
// into the Secret and reports the Certificate Ready for it. The suite never
// writes the Secret itself.
func Renew(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, ns, certificate, secret string) (Renewal, error) {
	certs := dyn.Resource(CertificateResource).Namespace(ns)
	u, err := certs.Get(ctx, certificate, metav1.GetOptions{})
	if err != nil {
		return Renewal{}, err
	}
	expiry, _, _ := unstructured.NestedString(u.Object, "status", "expirationDate")
	if err := afterLastRequest(ctx, cs, ns, secret); err != nil {
		return Renewal{}, err
	}
	r := Renewal{Before: Fingerprint(ctx, cs, ns, secret), Requested: time.Now()}
	// A renewal leaves spec.ensureRenewedAfter at its time, and while that
	// is in the past the controller takes it, not the time of a new
	// spec.renew, as the time to renew after: drop it with the request.
	if _, err := certs.Patch(ctx, certificate, types.MergePatchType, []byte(`{"spec":{"renew":true,"ensureRenewedAfter":null}}`), metav1.PatchOptions{}); err != nil {
		return r, fmt.Errorf("set spec.renew of Certificate %s/%s: %w", ns, certificate, err)
	}
	what := fmt.Sprintf("a new CA in Secret %s and Certificate %s/%s Ready", secret, ns, certificate)
	err = poll.Until(ctx, what, func(ctx context.Context) error {
		if r.SecretWritten.IsZero() {
			if fp := Fingerprint(ctx, cs, ns, secret); fp != "" && fp != r.Before {
				r.After, r.SecretWritten = fp, time.Now()
			}
		}
		u, err := certs.Get(ctx, certificate, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("new CA %q, states %v; get the Certificate: %w", r.After, r.States, err)
		}
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		if len(r.States) == 0 || r.States[len(r.States)-1] != state {
			r.States = append(r.States, state)
		}
		if exp, _, _ := unstructured.NestedString(u.Object, "status", "expirationDate"); r.Ready.IsZero() && state == "Ready" && exp != expiry {
			r.Ready = time.Now()
		}
		if r.Ready.IsZero() || r.SecretWritten.IsZero() {
			return fmt.Errorf("new CA %q, states %v", r.After, r.States)
		}
		return nil
	}, poll.Timeout(issueTimeout), poll.Interval(certPoll))
	if err != nil {
		return r, fmt.Errorf("renew: %w", err)
	}
	return r, nil
}

// afterLastRequest waits until the current second is past the Secret's
// cert.gardener.cloud/requestedAt: cert-management renews only when asked
// after it, and keeps it to the second.
func afterLastRequest(ctx context.Context, cs kubernetes.Interface, ns, name string) error {
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339, sec.Annotations[requestedAtAnnotation])
	if err != nil {
		return nil // never requested: any time will do
	}
	select {
	case <-time.After(time.Until(at.Add(time.Second))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Writers returns the Certificates (namespace/name), sorted, whose spec
// names Secret secretNamespace/secretName: cert-management writes it for
// each of them. A secretRef without a namespace, or the older
// spec.secretName, names the Certificate's own namespace.
func Writers(ctx context.Context, dyn dynamic.Interface, secretNamespace, secretName string) ([]string, error) {
	list, err := dyn.Resource(CertificateResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var writers []string
	for _, crt := range list.Items {
		ns, _, _ := unstructured.NestedString(crt.Object, "spec", "secretRef", "namespace")
		name, _, _ := unstructured.NestedString(crt.Object, "spec", "secretRef", "name")
		if name == "" {
			name, _, _ = unstructured.NestedString(crt.Object, "spec", "secretName")
		}
		if cmp.Or(ns, crt.GetNamespace()) == secretNamespace && name == secretName {
			writers = append(writers, crt.GetNamespace()+"/"+crt.GetName())
		}
	}
	slices.Sort(writers)
	return writers, nil
}

// WaitIssued waits until cert-management has written a CA into the
// Secret of the shipped Certificate and returns its fingerprint. On a
// first install cert-management may see the Certificate before its Issuer
// and back off for minutes; as its documentation says, the annotation
// gardener.cloud/operation=reconcile ends the backoff, and WaitIssued sets
// it once it sees one, as an operator installing would.
func WaitIssued(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, progress func(string, ...any)) (string, error) {
	certs := dyn.Resource(CertificateResource).Namespace(Namespace)
	var fp string
	nudged := false
	what := fmt.Sprintf("cert-management to write a CA into Secret %s/%s", Namespace, SecretName)
	err := poll.Until(ctx, what, func(ctx context.Context) error {
		if fp = CurrentFingerprint(ctx, cs); fp != "" {
			return nil
		}
		u, err := certs.Get(ctx, CertificateName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		state, _, _ := unstructured.NestedString(u.Object, "status", "state")
		backOff, _, _ := unstructured.NestedMap(u.Object, "status", "backoff")
		if backOff != nil && !nudged {
			progress("cert-management backs off from Certificate %s/%s (%v): annotating it gardener.cloud/operation=reconcile", Namespace, CertificateName, backOff)
			patch := []byte(`{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}}}`)
			if _, err := certs.Patch(ctx, CertificateName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return poll.Stop(err)
			}
			nudged = true
		}
		return fmt.Errorf("no CA yet; the Certificate's state is %q, backoff %v", state, backOff)
	}, poll.Timeout(issueTimeout))
	return fp, err
}
