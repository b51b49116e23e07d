package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// checkCASecret judges the CA the syncer copies by the syncer's own rules
// (cabundle.ValidateSource), and returns the current CA for
// ca-bundle, or nil.
func checkCASecret(cfg Config, secret *corev1.Secret, err error, now time.Time) (Result, *x509.Certificate) {
	what := fmt.Sprintf("Secret %s/%s", cfg.SecretNamespace, cfg.SecretName)
	certificates := fmt.Sprintf("kubectl -n %s get certificates.cert.gardener.cloud", cfg.SecretNamespace)
	switch {
	case apierrors.IsNotFound(err):
		return fail(IDCASecret, what+" not found; the webhook has no certificate and the syncer no CA",
			fmt.Sprintf("Check the Certificate that writes it (deploy/webhook/certificate.yaml) and cert-management: %s; or fix --secret-namespace/--secret-name.", certificates)), nil
	case err != nil:
		res, _ := unreadable(IDCASecret, fmt.Sprintf("get Secret %s/%s", cfg.SecretNamespace, cfg.SecretName), what, err)
		return res, nil
	}
	data, ok := secret.Data[cfg.CAKey]
	if !ok {
		return fail(IDCASecret, fmt.Sprintf("%s has no key %s (keys: %s)", what, cfg.CAKey, strings.Join(slices.Sorted(maps.Keys(secret.Data)), ", ")),
			fmt.Sprintf("Check that the Certificate is a CA (isCA: true) so that its issuer writes %s: %s; or fix --ca-key.", cfg.CAKey, certificates)), nil
	}
	usable, verdict := cabundle.ValidateSource(data, secret.Data[corev1.TLSCertKey], now)
	if !verdict.Valid() {
		return fail(IDCASecret, fmt.Sprintf("%s key %s is %s: %s", what, cfg.CAKey, verdict.Reason, verdict.Message),
			fmt.Sprintf("The syncer keeps the last good caBundle until this is fixed; have cert-management reissue the certificate: %s.", certificates)), nil
	}
	// The current CA is the newest by NotBefore, the first of those that
	// tie: an issuer that lists its retired CA next to the new one puts the
	// new one first.
	current := slices.MaxFunc(usable, func(a, b *x509.Certificate) int { return a.NotBefore.Compare(b.NotBefore) })
	ca := fmt.Sprintf("%s key %s: CA %q (sha256 %s)", what, cfg.CAKey, current.Subject.CommonName, shortFingerprint(current))
	if len(usable) > 1 {
		ca += fmt.Sprintf(" (and %d older CA(s))", len(usable)-1)
	}
	left := current.NotAfter.Sub(now)
	if left < cfg.MinCAValidity {
		return warn(IDCASecret, fmt.Sprintf("%s expires at %s, in %s, less than --min-ca-validity %s", ca, cabundle.FormatTime(current.NotAfter), formatDuration(left), cfg.MinCAValidity),
			fmt.Sprintf("The issuer should have renewed it by now; check the Certificate's status and cert-management's logs: %s.", certificates)), current
	}
	return pass(IDCASecret, fmt.Sprintf("%s valid until %s (%s left)", ca, cabundle.FormatTime(current.NotAfter), formatDuration(left))), current
}

// checkCABundle checks by fingerprint that every entry's caBundle, which the
// API server verifies the served certificate with, holds the Secret's CA.
func checkCABundle(cfg Config, ca *x509.Certificate, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	switch {
	case ca == nil:
		return skipped(IDCABundle, fmt.Sprintf("no usable CA in Secret %s/%s to compare with", cfg.SecretNamespace, cfg.SecretName), IDCASecret)
	case mwc == nil:
		return skipped(IDCABundle, mwcAbsent(cfg, mwcErr), IDWebhookConfiguration)
	case len(mwc.Webhooks) == 0:
		return skipped(IDCABundle, fmt.Sprintf("MutatingWebhookConfiguration %s has no webhook entries", cfg.WebhookConfiguration), IDWebhookConfiguration)
	}
	want := cabundle.Fingerprint(ca)
	var missing []string
	for _, wh := range mwc.Webhooks {
		if problem := bundleProblem(wh.ClientConfig.CABundle, want); problem != "" {
			missing = append(missing, fmt.Sprintf("%s (%s)", wh.Name, problem))
		}
	}
	if len(missing) > 0 {
		return fail(IDCABundle,
			fmt.Sprintf("MutatingWebhookConfiguration %s: entries without the CA sha256 %s from Secret %s/%s (%d of %d): %s; the API server cannot verify the webhook and admits Pods without the affinity",
				cfg.WebhookConfiguration, shortFingerprint(ca), cfg.SecretNamespace, cfg.SecretName, len(missing), len(mwc.Webhooks), strings.Join(missing, ", ")),
			fmt.Sprintf("The syncer leader writes the caBundle within seconds; check syncer-lease and its logs and Events: kubectl -n %s logs -l app.kubernetes.io/name=cabundle-syncer.", cfg.Namespace))
	}
	all := fmt.Sprintf("all %d entries of %s trust", len(mwc.Webhooks), cfg.WebhookConfiguration)
	if len(mwc.Webhooks) == 1 {
		all = fmt.Sprintf("the 1 entry of %s trusts", cfg.WebhookConfiguration)
	}
	return pass(IDCABundle, fmt.Sprintf("%s the CA sha256 %s from Secret %s/%s", all, shortFingerprint(ca), cfg.SecretNamespace, cfg.SecretName))
}

// bundleProblem says why a caBundle does not hold the certificate with
// fingerprint want, or "" when it does.
func bundleProblem(bundle []byte, want string) string {
	certs, err := cabundle.Parse(bundle)
	switch {
	case len(strings.TrimSpace(string(bundle))) == 0:
		return "caBundle is empty"
	case err != nil:
		return "caBundle does not parse: " + err.Error()
	case slices.ContainsFunc(certs, func(c *x509.Certificate) bool { return cabundle.Fingerprint(c) == want }):
		return ""
	}
	return fmt.Sprintf("caBundle holds %d other certificate(s)", len(certs))
}

// checkServedCertificate dials our entries' ready endpoints as the API
// server does: a replica whose certificate does not verify fails open on
// every call, while ca-bundle, comparing only caBundle and Secret, passes.
func checkServedCertificate(ctx context.Context, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error, targets []entryTarget, now time.Time) Result {
	if mwc == nil {
		return skipped(IDServedCertificate, mwcAbsent(cfg, mwcErr), IDWebhookConfiguration)
	}
	d := dialled{seen: map[string]bool{}}
	for _, t := range targets {
		if !t.ours || len(t.ready) == 0 {
			continue
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(t.entry.ClientConfig.CABundle) {
			return skipped(IDServedCertificate, fmt.Sprintf("entry %s has no usable caBundle to verify with", t.entry.Name), IDCABundle)
		}
		for _, ep := range t.ready {
			// Entries with the same Service and caBundle make the same call.
			key := t.serverName() + "\x00" + ep.addr + "\x00" + string(t.entry.ClientConfig.CABundle)
			if !d.seen[key] {
				d.seen[key] = true
				d.dial(ctx, ep, t.serverName(), roots, now)
			}
		}
	}
	if len(d.seen) == 0 {
		return skipped(IDServedCertificate, "no ready endpoint to dial", IDWebhookEndpoints)
	}
	res := d.result(cfg)
	res.Details = d.details
	return res
}

// dialled collects what the endpoints served, one line each.
type dialled struct {
	bad, unreachable, good, details []string
	seen                            map[string]bool // the calls made
}

// dial completes a TLS handshake with ep that trusts nothing, so that a
// certificate that does not verify can still be described, and verifies what
// it serves for serverName against the entry's roots as the API server does.
func (d *dialled) dial(ctx context.Context, ep endpoint, serverName string, roots *x509.CertPool, now time.Time) {
	dialer := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // verified below
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := dialer.DialContext(ctx, "tcp", ep.addr)
	if err != nil {
		d.unreachable = append(d.unreachable, ep.name)
		d.details = append(d.details, ep.name+": not reached: "+oneLine(err.Error()))
		return
	}
	defer func() { _ = conn.Close() }()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates // never empty: crypto/tls requires one
	line := fmt.Sprintf("%s: serial %X, notAfter %s", ep.name, chain[0].SerialNumber, cabundle.FormatTime(chain[0].NotAfter))
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err = chain[0].Verify(x509.VerifyOptions{
		DNSName: serverName, Roots: roots, Intermediates: intermediates, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		d.bad = append(d.bad, line)
		d.details = append(d.details, line+": does not verify: "+err.Error())
		return
	}
	d.good = append(d.good, line)
	d.details = append(d.details, line+": verifies")
}

func (d *dialled) result(cfg Config) Result {
	n, svc := len(d.seen), cfg.WebhookService+"."+cfg.Namespace+".svc"
	switch {
	case len(d.bad) > 0:
		return fail(IDServedCertificate, fmt.Sprintf("%d of %d endpoints serve a certificate that does not verify for %s against the caBundle: %s",
			len(d.bad), n, svc, strings.Join(d.bad, "; ")),
			"The API server fails open on calls to these replicas: restart their Pods so that they load the Secret's certificate, "+
				"and check that the Secret and the caBundle come from the same CA (ca-bundle); see \"Webhook unreachable\" in docs/troubleshooting.md.")
	case len(d.unreachable) > 0 && cfg.InCluster:
		return fail(IDServedCertificate, fmt.Sprintf("%d of %d endpoints could not be reached from this Pod of the cluster: %s; %d verify",
			len(d.unreachable), n, strings.Join(d.unreachable, ", "), len(d.good)),
			"A NetworkPolicy drops this Pod's connections to the webhook's Pods, or they do not listen: under a deny-all, "+
				"the check needs the shipped NetworkPolicy kyma-project.io--kim-snatch-check-allow-to-webhook (deploy/README.md, \"Network policies\"); "+
				"see \"Webhook unreachable\" in docs/troubleshooting.md.")
	case len(d.unreachable) > 0:
		return warn(IDServedCertificate, fmt.Sprintf("%d of %d endpoints could not be reached from where check runs: %s; %d verify",
			len(d.unreachable), n, strings.Join(d.unreachable, ", "), len(d.good)),
			"Pod addresses are reachable only inside the cluster: run the check there (kubectl -n "+cfg.Namespace+
				" create job --from=cronjob/kim-snatch-check kim-snatch-check-$(date -u +%Y%m%d%H%M%S), docs/operations.md \"Run the check in the cluster\"), or see \"Webhook unreachable\" in docs/troubleshooting.md.")
	}
	return pass(IDServedCertificate, fmt.Sprintf("%d endpoints serve certificates that verify for %s against the caBundle: %s", n, svc, strings.Join(d.good, "; ")))
}
