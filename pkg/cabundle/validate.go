package cabundle

import (
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Reason classifies a source. The values are bounded and stable: the syncer
// uses them as metric labels and in Events.
type Reason string

// The reasons Validate can give.
const (
	ReasonValid      Reason = "valid"      // at least one usable CA
	ReasonEmpty      Reason = "empty"      // nothing but whitespace
	ReasonUnparsable Reason = "unparsable" // not clean PEM certificates
	ReasonNotCA      Reason = "not-ca"     // a certificate is not a CA
	ReasonExpired    Reason = "expired"    // every certificate has expired
)

// Verdict says whether a source may be written, and why not.
type Verdict struct {
	Reason  Reason
	Message string // explains the reason for a human, e.g. in an Event
}

// Valid reports whether the source may be written.
func (v Verdict) Valid() bool { return v.Reason == ReasonValid }

// String returns the reason and the message.
func (v Verdict) String() string { return fmt.Sprintf("%s: %s", v.Reason, v.Message) }

// Validate parses source and checks that it can serve as the webhook's CA at
// now. It returns the usable CAs without duplicates, in source order.
//
// One certificate that is not a CA rejects the whole source: a leaf in ca.crt
// means the wrong key or the wrong Secret, and a bundle built from the rest
// would hide that. Expired certificates, in contrast, are only dropped, so
// that a source that still lists its retired CA next to the new one keeps
// working; a source with nothing left is rejected. A certificate that is not
// yet valid is accepted: the clocks of the issuer, the syncer and the API
// server differ by seconds, and rejecting it would delay a rotation that the
// webhook Pods are about to serve.
func Validate(source []byte, now time.Time) ([]*x509.Certificate, Verdict) {
	certs, err := Parse(source)
	switch {
	case errors.Is(err, ErrEmpty):
		return nil, Verdict{Reason: ReasonEmpty, Message: "the CA data is empty"}
	case err != nil:
		return nil, Verdict{Reason: ReasonUnparsable, Message: fmt.Sprintf("the CA data is not clean PEM certificates: %v", err)}
	}
	var usable []*x509.Certificate
	seen := make(map[string]bool, len(certs))
	for _, c := range certs {
		fp := Fingerprint(c)
		if !c.BasicConstraintsValid || !c.IsCA {
			return nil, Verdict{Reason: ReasonNotCA, Message: fmt.Sprintf("certificate %q (sha256 %s) is not a CA", c.Subject, fp)}
		}
		if seen[fp] || expired(c, now) {
			continue
		}
		seen[fp] = true
		usable = append(usable, c)
	}
	if len(usable) == 0 {
		return nil, Verdict{Reason: ReasonExpired, Message: fmt.Sprintf("every CA has expired; the last expired at %s", FormatTime(latestNotAfter(certs)))}
	}
	return usable, Verdict{Reason: ReasonValid, Message: fmt.Sprintf("%d CA certificate(s)", len(usable))}
}

func expired(c *x509.Certificate, now time.Time) bool {
	return now.After(c.NotAfter)
}

// latestNotAfter returns the latest expiry in certs, which must not be empty.
func latestNotAfter(certs []*x509.Certificate) time.Time {
	return slices.MaxFunc(certs, func(a, b *x509.Certificate) int { return a.NotAfter.Compare(b.NotAfter) }).NotAfter
}
