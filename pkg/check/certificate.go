package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// checkServedCertificate dials every ready endpoint of our entries as the
// API server does (docs/operations.md, "Checks") and verifies the
// certificate it serves. A replica whose certificate does not verify makes
// the API server fail open on every call it sends there, while ca-bundle,
// which only compares the caBundle with the Secret, passes. Pod addresses
// are reachable only inside the cluster: from outside, the endpoints that
// cannot be dialled make a warning that says where to run the check.
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
		d.dialEntry(ctx, t, roots, now)
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

// dialEntry dials each ready endpoint of t once and verifies what it serves
// against roots, the entry's caBundle.
func (d *dialled) dialEntry(ctx context.Context, t entryTarget, roots *x509.CertPool, now time.Time) {
	for _, ep := range t.ready {
		// Entries that call the same Service with the same caBundle
		// make the same call.
		key := t.serverName() + "\x00" + ep.addr + "\x00" + string(t.entry.ClientConfig.CABundle)
		if d.seen[key] {
			continue
		}
		d.seen[key] = true
		chain, err := servedChain(ctx, ep.addr)
		if err != nil {
			d.unreachable = append(d.unreachable, ep.name)
			d.details = append(d.details, fmt.Sprintf("%s: not reached: %v", ep.name, err))
			continue
		}
		line := fmt.Sprintf("%s: serial %X, notAfter %s", ep.name, chain[0].SerialNumber, cabundle.FormatTime(chain[0].NotAfter))
		if err := verify(chain, t.serverName(), roots, now); err != nil {
			d.bad = append(d.bad, line)
			d.details = append(d.details, line+": does not verify: "+err.Error())
			continue
		}
		d.good = append(d.good, line)
		d.details = append(d.details, line+": verifies")
	}
}

// result fails on any certificate that does not verify, and warns about
// endpoints that could not be reached.
func (d *dialled) result(cfg Config) Result {
	n, svc := len(d.seen), cfg.WebhookService+"."+cfg.Namespace+".svc"
	switch {
	case len(d.bad) > 0:
		return fail(IDServedCertificate, fmt.Sprintf("%d of %d endpoints serve a certificate that does not verify for %s against the caBundle: %s",
			len(d.bad), n, svc, strings.Join(d.bad, "; ")),
			"The API server fails open on calls to these replicas: restart their Pods so that they load the Secret's certificate, "+
				"and check that the Secret and the caBundle come from the same CA (ca-bundle); see \"Webhook unreachable\" in docs/troubleshooting.md.")
	case len(d.unreachable) > 0:
		return warn(IDServedCertificate, fmt.Sprintf("%d of %d endpoints could not be reached from where check runs: %s; %d verify",
			len(d.unreachable), n, strings.Join(d.unreachable, ", "), len(d.good)),
			"Pod addresses are reachable only inside the cluster: run the check there (kubectl -n "+cfg.Namespace+
				" create job --from=cronjob/kim-snatch-check kim-snatch-check-now), or see \"Webhook unreachable\" in docs/troubleshooting.md.")
	}
	return pass(IDServedCertificate, fmt.Sprintf("%d endpoints serve certificates that verify for %s against the caBundle: %s", n, svc, strings.Join(d.good, "; ")))
}

// verify checks a served chain as the API server's TLS client does.
func verify(chain []*x509.Certificate, serverName string, roots *x509.CertPool, now time.Time) error {
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	_, err := chain[0].Verify(x509.VerifyOptions{
		DNSName:       serverName,
		Roots:         roots,
		Intermediates: intermediates,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// servedChain completes a TLS handshake with addr and returns the certificate
// chain it presented, never empty. It trusts nothing here: verify decides,
// so that a certificate that does not verify can still be described.
func servedChain(ctx context.Context, addr string) ([]*x509.Certificate, error) {
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // verify checks the chain against the caBundle
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	defer func() { _ = conn.Close() }()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(chain) == 0 {
		return nil, errors.New("no certificate presented")
	}
	return chain, nil
}
