package cabundle

import (
	"crypto/x509"
	"fmt"
	"time"
)

// ValidateSource is the whole verdict on a certificate Secret, as Merge and
// the health check give it: Validate on ca.crt, then VerifyServing on tls.crt.
func ValidateSource(source, serving []byte, now time.Time) ([]*x509.Certificate, Verdict) {
	cas, verdict := Validate(source, now)
	if !verdict.Valid() {
		return nil, verdict
	}
	if v := VerifyServing(cas, serving, now); !v.Valid() {
		return nil, v
	}
	return cas, verdict
}

// VerifyServing checks that the serving certificate of the same Secret
// verifies against the CAs of its source, as the API server will verify it
// with the bundle: serving is the PEM data of tls.crt, whose first
// certificate is the one served and the others intermediates, for server
// authentication. A CA that does not issue the Secret's own certificate
// means a mixed-up or forged Secret, and writing it would make every call
// of the webhook fail open.
//
// The time is now, or the certificate's notBefore when that is later: like
// Validate with a CA, a certificate not yet valid is accepted, as the clocks
// of issuer and syncer differ by seconds and a renewal is seen at once. An
// expired certificate does not verify.
func VerifyServing(cas []*x509.Certificate, serving []byte, now time.Time) Verdict {
	certs := parseLenient(serving)
	if len(certs) == 0 {
		return Verdict{Reason: ReasonNotIssuer, Message: "the serving certificate (tls.crt) that the CA must verify is missing or holds no certificate"}
	}
	roots, intermediates := x509.NewCertPool(), x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	leaf := certs[0]
	at := now
	if leaf.NotBefore.After(at) {
		at = leaf.NotBefore
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: intermediates, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return Verdict{Reason: ReasonNotIssuer, Message: fmt.Sprintf("the serving certificate %q (sha256 %s) in tls.crt does not verify against the CA: %v",
			leaf.Subject, Fingerprint(leaf), err)}
	}
	return Verdict{Reason: ReasonValid, Message: fmt.Sprintf("the serving certificate %q (sha256 %s) verifies against the CA", leaf.Subject, Fingerprint(leaf))}
}
