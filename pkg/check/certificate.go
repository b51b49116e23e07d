package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// dialTimeout bounds one TLS handshake with one endpoint.
const dialTimeout = 3 * time.Second

// checkServedCertificate dials every ready endpoint of our entries as the
// API server does, and verifies the certificate it serves: for
// <service>.<namespace>.svc, against the entry's caBundle, at TLS 1.2 or
// higher. A replica whose certificate does not verify makes the API server
// fail open on every call it sends there, while ca-bundle, which only
// compares the caBundle with the Secret, passes.
//
// Pod addresses are reachable only from inside the cluster; from outside,
// the endpoints that cannot be dialled make a warning that says where to
// run the check instead.
func checkServedCertificate(ctx context.Context, cfg Config, mwc *admissionregistrationv1.MutatingWebhookConfiguration, targets []entryTarget, now time.Time) Result {
	skip := func(msg string) Result {
		return Result{ID: IDServedCertificate, Status: StatusSkip, Message: msg, Remediation: "Fix the check named in the message first."}
	}
	if mwc == nil {
		return skip(fmt.Sprintf("MutatingWebhookConfiguration %s could not be read (see %s)", cfg.WebhookConfiguration, IDWebhookConfiguration))
	}
	var bad, unreachable, good, details []string
	dialled := 0
	seen := map[string]bool{}
	for _, t := range targets {
		if !t.ours || len(t.ready) == 0 {
			continue
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(t.entry.ClientConfig.CABundle) {
			return skip(fmt.Sprintf("entry %s has no usable caBundle to verify with (see %s)", t.entry.Name, IDCABundle))
		}
		for _, ep := range t.ready {
			// Entries that call the same Service with the same caBundle
			// make the same call.
			key := t.serverName() + "\x00" + ep.addr + "\x00" + string(t.entry.ClientConfig.CABundle)
			if seen[key] {
				continue
			}
			seen[key] = true
			dialled++
			name := ep.addr
			if ep.pod != "" {
				name = fmt.Sprintf("%s (Pod %s)", ep.addr, ep.pod)
			}
			cert, err := served(ctx, ep.addr)
			if err != nil {
				unreachable = append(unreachable, name)
				details = append(details, fmt.Sprintf("%s: not reached: %v", name, err))
				continue
			}
			line := fmt.Sprintf("%s: serial %X, notAfter %s", name, cert.leaf.SerialNumber, formatTime(cert.leaf.NotAfter))
			if err := cert.verify(t.serverName(), roots, now); err != nil {
				bad = append(bad, line)
				details = append(details, line+": does not verify: "+err.Error())
				continue
			}
			good = append(good, line)
			details = append(details, line+": verifies")
		}
	}
	if dialled == 0 {
		return skip(fmt.Sprintf("no ready endpoint to dial (see %s)", IDWebhookEndpoints))
	}
	svc := cfg.WebhookService + "." + cfg.Namespace + ".svc"
	res := Result{ID: IDServedCertificate, Details: details}
	switch {
	case len(bad) > 0:
		res.Status = StatusFail
		res.Message = oneLine(fmt.Sprintf("%d of %d endpoints serve a certificate that does not verify for %s against the caBundle: %s",
			len(bad), dialled, svc, strings.Join(bad, "; ")))
		res.Remediation = "The API server fails open on calls to these replicas: restart their Pods so that they load the Secret's certificate, " +
			"and check that the Secret and the caBundle come from the same CA (ca-bundle); see \"Webhook unreachable\" in docs/troubleshooting.md."
	case len(unreachable) > 0:
		res.Status = StatusWarn
		res.Message = oneLine(fmt.Sprintf("%d of %d endpoints could not be reached from where check runs: %s; %d verify",
			len(unreachable), dialled, strings.Join(unreachable, ", "), len(good)))
		res.Remediation = "Pod addresses are reachable only inside the cluster: run the check there (kubectl -n " + cfg.Namespace +
			" create job --from=cronjob/kim-snatch-check kim-snatch-check-now), or see \"Webhook unreachable\" in docs/troubleshooting.md."
	default:
		res.Status = StatusPass
		res.Message = oneLine(fmt.Sprintf("%d endpoints serve certificates that verify for %s against the caBundle: %s", dialled, svc, strings.Join(good, "; ")))
	}
	return res
}

// servedCert is what one endpoint presented in its handshake.
type servedCert struct {
	leaf          *x509.Certificate
	intermediates *x509.CertPool
}

// verify checks the certificate as the API server's TLS client does.
func (c servedCert) verify(serverName string, roots *x509.CertPool, now time.Time) error {
	_, err := c.leaf.Verify(x509.VerifyOptions{
		DNSName:       serverName,
		Roots:         roots,
		Intermediates: c.intermediates,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	return err
}

// served completes a TLS handshake with addr and returns the certificate
// chain it presented. It trusts nothing here: verify decides, so that a
// certificate that does not verify can still be described.
func served(ctx context.Context, addr string) (servedCert, error) {
	d := tls.Dialer{
		NetDialer: &net.Dialer{Timeout: dialTimeout},
		Config:    &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // verify checks the chain against the caBundle
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return servedCert{}, errors.New(oneLine(err.Error()))
	}
	defer func() { _ = conn.Close() }()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(chain) == 0 {
		return servedCert{}, errors.New("no certificate presented")
	}
	c := servedCert{leaf: chain[0], intermediates: x509.NewCertPool()}
	for _, ic := range chain[1:] {
		c.intermediates.AddCert(ic)
	}
	return c, nil
}
