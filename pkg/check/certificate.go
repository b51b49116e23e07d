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
	var bad, unreachable, good, details []string
	seen := map[string]bool{}
	for _, t := range targets {
		if !t.ours || len(t.ready) == 0 {
			continue
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(t.entry.ClientConfig.CABundle) {
			return skipped(IDServedCertificate, fmt.Sprintf("entry %s has no usable caBundle to verify with", t.entry.Name), IDCABundle)
		}
		for _, ep := range t.ready {
			// Entries that call the same Service with the same caBundle
			// make the same call.
			key := t.serverName() + "\x00" + ep.addr + "\x00" + string(t.entry.ClientConfig.CABundle)
			if seen[key] {
				continue
			}
			seen[key] = true
			chain, err := served(ctx, ep.addr)
			if err != nil {
				unreachable = append(unreachable, ep.name)
				details = append(details, fmt.Sprintf("%s: not reached: %v", ep.name, err))
				continue
			}
			line := fmt.Sprintf("%s: serial %X, notAfter %s", ep.name, chain[0].SerialNumber, formatTime(chain[0].NotAfter))
			if err := verify(chain, t.serverName(), roots, now); err != nil {
				bad = append(bad, line)
				details = append(details, line+": does not verify: "+err.Error())
				continue
			}
			good = append(good, line)
			details = append(details, line+": verifies")
		}
	}
	dialled := len(seen)
	if dialled == 0 {
		return skipped(IDServedCertificate, "no ready endpoint to dial", IDWebhookEndpoints)
	}
	svc := cfg.WebhookService + "." + cfg.Namespace + ".svc"
	var res Result
	switch {
	case len(bad) > 0:
		res = fail(IDServedCertificate, fmt.Sprintf("%d of %d endpoints serve a certificate that does not verify for %s against the caBundle: %s",
			len(bad), dialled, svc, strings.Join(bad, "; ")),
			"The API server fails open on calls to these replicas: restart their Pods so that they load the Secret's certificate, "+
				"and check that the Secret and the caBundle come from the same CA (ca-bundle); see \"Webhook unreachable\" in docs/troubleshooting.md.")
	case len(unreachable) > 0:
		res = warn(IDServedCertificate, fmt.Sprintf("%d of %d endpoints could not be reached from where check runs: %s; %d verify",
			len(unreachable), dialled, strings.Join(unreachable, ", "), len(good)),
			"Pod addresses are reachable only inside the cluster: run the check there (kubectl -n "+cfg.Namespace+
				" create job --from=cronjob/kim-snatch-check kim-snatch-check-now), or see \"Webhook unreachable\" in docs/troubleshooting.md.")
	default:
		res = pass(IDServedCertificate, fmt.Sprintf("%d endpoints serve certificates that verify for %s against the caBundle: %s", dialled, svc, strings.Join(good, "; ")))
	}
	res.Details = details
	return res
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

// served completes a TLS handshake with addr and returns the certificate
// chain it presented, never empty. It trusts nothing here: verify decides,
// so that a certificate that does not verify can still be described.
func served(ctx context.Context, addr string) ([]*x509.Certificate, error) {
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
