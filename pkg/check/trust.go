package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// caFacts are what ca-secret found: the Secret's keys, the syncer's
// verdict on its CA, and the current CA.
type caFacts struct {
	Config
	Keys                    []string
	Reason                  cabundle.Reason
	Detail                  string
	CommonName, Fingerprint string
	Older                   int // usable CAs besides the current one
	NotAfter                time.Time
	Left                    time.Duration
}

// checkCASecret judges the CA the syncer copies by the syncer's own rules
// (cabundle.ValidateSource), and returns the current CA for
// ca-bundle, or nil.
func checkCASecret(cfg Config, secret *corev1.Secret, err error, now time.Time) (Result, *x509.Certificate) {
	f, ca := decideCASecret(cfg, secret, err, now)
	return f.result(IDCASecret), ca
}

func decideCASecret(cfg Config, secret *corev1.Secret, err error, now time.Time) (found, *x509.Certificate) {
	facts := caFacts{Config: cfg}
	name := cfg.SecretNamespace + "/" + cfg.SecretName
	switch {
	case apierrors.IsNotFound(err):
		return judged(StatusFail, keyCAMissing, facts), nil
	case err != nil:
		res, _ := unreadable("get Secret "+name, "Secret "+name, err)
		return res, nil
	}
	data, ok := secret.Data[cfg.CAKey]
	if !ok {
		facts.Keys = slices.Sorted(maps.Keys(secret.Data))
		return judged(StatusFail, keyCANoKey, facts), nil
	}
	usable, verdict := cabundle.ValidateSource(data, secret.Data[corev1.TLSCertKey], now)
	if !verdict.Valid() {
		facts.Reason, facts.Detail = verdict.Reason, verdict.Message
		return judged(StatusFail, keyCAInvalid, facts), nil
	}
	// The current CA is the newest by NotBefore, the first of those that
	// tie: an issuer that lists its retired CA next to the new one puts the
	// new one first.
	current := slices.MaxFunc(usable, func(a, b *x509.Certificate) int { return a.NotBefore.Compare(b.NotBefore) })
	facts.CommonName, facts.Fingerprint, facts.Older = current.Subject.CommonName, shortFingerprint(current), len(usable)-1
	facts.NotAfter, facts.Left = current.NotAfter, current.NotAfter.Sub(now)
	if facts.Left < cfg.MinCAValidity {
		return judged(StatusWarn, keyCAExpiring, facts), current
	}
	return judged(StatusPass, keyCAValid, facts), current
}

// bundleFacts are what ca-bundle found: the entries whose caBundle lacks
// the Secret's CA, and why.
type bundleFacts struct {
	Config
	MWCMissing  bool
	Fingerprint string
	Entries     int
	Missing     []bundleProblem
}

// bundleProblem is why an entry's caBundle does not hold the CA.
type bundleProblem struct {
	Name     string
	Empty    bool
	ParseErr error
	Others   int // certificates it holds instead
}

// checkCABundle checks by fingerprint that every entry's caBundle, which the
// API server verifies the served certificate with, holds the Secret's CA.
func checkCABundle(cfg Config, ca *x509.Certificate, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	mwcErr error) Result {
	facts := bundleFacts{Config: cfg, MWCMissing: apierrors.IsNotFound(mwcErr)}
	switch {
	case ca == nil:
		return blocked(keyBundleNoCA, facts, IDCASecret).result(IDCABundle)
	case mwc == nil:
		return blocked(keyBundleNoMWC, facts, IDWebhookConfiguration).result(IDCABundle)
	case len(mwc.Webhooks) == 0:
		return blocked(keyBundleNoEntries, facts, IDWebhookConfiguration).result(IDCABundle)
	}
	want := cabundle.Fingerprint(ca)
	facts.Fingerprint, facts.Entries = shortFingerprint(ca), len(mwc.Webhooks)
	for _, wh := range mwc.Webhooks {
		if problem, ok := bundleLacks(wh.Name, wh.ClientConfig.CABundle, want); ok {
			facts.Missing = append(facts.Missing, problem)
		}
	}
	if len(facts.Missing) > 0 {
		return judged(StatusFail, keyBundleMissing, facts).result(IDCABundle)
	}
	return judged(StatusPass, keyBundleTrusted, facts).result(IDCABundle)
}

// bundleLacks says why the caBundle of entry name does not hold the
// certificate with fingerprint want, or false when it does.
func bundleLacks(name string, bundle []byte, want string) (bundleProblem, bool) {
	certs, err := cabundle.Parse(bundle)
	p := bundleProblem{Name: name}
	switch {
	case len(strings.TrimSpace(string(bundle))) == 0:
		p.Empty = true
	case err != nil:
		p.ParseErr = err
	case slices.ContainsFunc(certs, func(c *x509.Certificate) bool { return cabundle.Fingerprint(c) == want }):
		return p, false
	default:
		p.Others = len(certs)
	}
	return p, true
}

// servedFacts are what served-certificate found: what each endpoint
// dialled served, and whether it verified.
type servedFacts struct {
	Config
	MWCMissing             bool
	Entry                  string // whose caBundle holds no certificate
	Dialled                int
	Bad, Good, Unreachable []servedEndpoint
}

// servedEndpoint is one endpoint dialled: what it served, or why not.
type servedEndpoint struct {
	Name      string
	Serial    *big.Int
	NotAfter  time.Time
	Unreached bool
	Err       error // why it was not reached or does not verify
}

// checkServedCertificate dials our entries' ready endpoints as the API
// server does: a replica whose certificate does not verify fails open on
// every call, while ca-bundle, comparing only caBundle and Secret, passes.
func checkServedCertificate(ctx context.Context, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	mwcErr error, targets []entryTarget, now time.Time) Result {
	return decideServedCertificate(ctx, cfg, mwc, mwcErr, targets, now).result(IDServedCertificate)
}

func decideServedCertificate(ctx context.Context, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	mwcErr error, targets []entryTarget, now time.Time) found {
	facts := servedFacts{Config: cfg, MWCMissing: apierrors.IsNotFound(mwcErr)}
	if mwc == nil {
		return blocked(keyServedNoMWC, facts, IDWebhookConfiguration)
	}
	var details []any
	seen := map[string]bool{} // the calls made
	for _, t := range targets {
		if !t.ours || len(t.Ready) == 0 {
			continue
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(t.Entry.ClientConfig.CABundle) {
			facts.Entry = t.Entry.Name
			return blocked(keyServedNoBundle, facts, IDCABundle)
		}
		for _, ep := range t.Ready {
			// Entries with the same Service and caBundle make the same call.
			key := t.serverName() + "\x00" + ep.addr + "\x00" + string(t.Entry.ClientConfig.CABundle)
			if !seen[key] {
				seen[key] = true
				details = append(details, facts.dial(ctx, ep, t.serverName(), roots, now))
			}
		}
	}
	if facts.Dialled = len(seen); facts.Dialled == 0 {
		return blocked(keyServedNoEndpoint, facts, IDWebhookEndpoints)
	}
	res := facts.judge()
	res.details = details
	return res
}

// dial completes a TLS handshake with ep that trusts nothing, so that a
// certificate that does not verify can still be described, and verifies what
// it serves for serverName against the entry's roots as the API server does.
func (f *servedFacts) dial(ctx context.Context, ep endpoint, serverName string, roots *x509.CertPool,
	now time.Time) servedEndpoint {
	//nolint:gosec // verified below
	dialer := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	served := servedEndpoint{Name: ep.String()}
	conn, err := dialer.DialContext(ctx, "tcp", ep.addr)
	if err != nil {
		served.Unreached, served.Err = true, err
		f.Unreachable = append(f.Unreachable, served)
		return served
	}
	defer func() { _ = conn.Close() }()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates // never empty: crypto/tls requires one
	served.Serial, served.NotAfter = chain[0].SerialNumber, chain[0].NotAfter
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, served.Err = chain[0].Verify(x509.VerifyOptions{
		DNSName: serverName, Roots: roots, Intermediates: intermediates, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if served.Err != nil {
		f.Bad = append(f.Bad, served)
	} else {
		f.Good = append(f.Good, served)
	}
	return served
}

func (f servedFacts) judge() found {
	switch {
	case len(f.Bad) > 0:
		return judged(StatusFail, keyServedBad, f)
	case len(f.Unreachable) > 0 && f.InCluster:
		return judged(StatusFail, keyServedUnreachable, f)
	case len(f.Unreachable) > 0:
		return judged(StatusWarn, keyServedOutOfReach, f)
	}
	return judged(StatusPass, keyServedVerified, f)
}
