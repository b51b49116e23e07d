package cabundle

import (
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Record is what the syncer must remember about one CA in the bundle across
// reconciles, restarts and leader changes.
type Record struct {
	FirstSeen    time.Time // in the source, or in the bundle for a CA that was there before any record
	SupersededAt time.Time // when first missing from the source, zero while there; the overlap runs from here
}

// State holds the records of the CAs in a bundle, by Fingerprint.
type State map[string]Record

// Input is everything Merge needs.
type Input struct {
	Source []byte // the PEM data of ca.crt in the certificate Secret
	// Serving is the PEM data of tls.crt in the same Secret, which the
	// source must verify (VerifyServing); without it nothing is written.
	Serving []byte
	// Current holds the caBundle of every webhook entry, where the previous CAs
	// come from; after an external edit they may differ, and any may be damaged.
	Current [][]byte
	State   State         // as returned by the last Merge that was written
	Overlap time.Duration // how long a CA stays after it left the source; zero replaces the bundle
	Now     time.Time     // the time of the decision; Merge reads no clock
}

// Result is the outcome of Merge.
type Result struct {
	Verdict Verdict // on the source; when not valid, nothing else is set and nothing must be written
	Bundle  []byte  // the caBundle to write: PEM, in the order of Certificates
	// Certificates are the CAs in Bundle: first those of the source, newest
	// first, then the previous ones, most recently superseded first.
	Certificates []*x509.Certificate
	State        State     // a record for every certificate in Bundle and nothing else
	NotAfter     time.Time // the latest expiry of the CAs in the source
	// RequeueAfter is when the bundle will change without any new input:
	// the earliest end of an overlap or expiry of a certificate in Bundle.
	RequeueAfter time.Duration
}

// Merge builds the caBundle: every usable CA of the source, plus each previous
// CA in Current that is a CA, has not expired, and left the source less than
// Overlap ago, without duplicates. The order depends on the certificates and
// the state, not on the input's order, so an unchanged situation gives the
// same bytes and no write. A previous CA without a record (state lost, or an
// older syncer wrote the bundle) starts its overlap now: keeping a CA too long
// is harmless, dropping it too early opens the window Merge exists to close.
// A record superseded later than now is read as superseded now, so that a
// forged or skewed time cannot keep a CA trusted past the overlap.
func Merge(in Input) Result {
	source, verdict := ValidateSource(in.Source, in.Serving, in.Now)
	if !verdict.Valid() {
		return Result{Verdict: verdict}
	}
	// Records keep time to the second, as the cluster does. Rounding up keeps an
	// overlap at least as long as asked for, and a record read back as written.
	stamp := in.Now.UTC().Add(time.Second - time.Nanosecond).Truncate(time.Second)
	var current []entry
	seen := make(map[string]bool)
	for _, c := range source {
		fp := Fingerprint(c)
		seen[fp] = true
		current = append(current, entry{cert: c, fp: fp, rec: Record{FirstSeen: orStamp(in.State[fp].FirstSeen, stamp)}})
	}
	previous := previousEntries(in, seen, stamp)
	slices.SortFunc(current, newestFirst)
	slices.SortFunc(previous, newestFirst)
	res := bundleOf(slices.Concat(current, previous), in.Overlap, in.Now)
	res.Verdict, res.NotAfter = verdict, latestNotAfter(source)
	return res
}

type entry struct {
	cert *x509.Certificate
	fp   string
	rec  Record
}

// previousEntries are the CAs in the bundles in place that are not in seen,
// are CAs, have not expired, and are still within their overlap.
func previousEntries(in Input, seen map[string]bool, stamp time.Time) []entry {
	if in.Overlap <= 0 {
		return nil
	}
	var previous []entry
	for _, b := range in.Current {
		for _, c := range parseLenient(b) {
			fp := Fingerprint(c)
			if seen[fp] || !c.BasicConstraintsValid || !c.IsCA || in.Now.After(c.NotAfter) {
				continue
			}
			seen[fp] = true
			rec := in.State[fp]
			rec.FirstSeen, rec.SupersededAt = orStamp(rec.FirstSeen, stamp), orStamp(rec.SupersededAt, stamp)
			if rec.SupersededAt.After(stamp) {
				rec.SupersededAt = stamp // no overlap starts in the future
			}
			if in.Now.Before(rec.SupersededAt.Add(in.Overlap)) {
				previous = append(previous, entry{cert: c, fp: fp, rec: rec})
			}
		}
	}
	return previous
}

func orStamp(t, stamp time.Time) time.Time {
	if t.IsZero() {
		return stamp
	}
	return t
}

// newestFirst orders entries: among previous CAs the most recently
// superseded first, then the newest first.
func newestFirst(a, b entry) int {
	return cmp.Or(
		b.rec.SupersededAt.Compare(a.rec.SupersededAt),
		b.cert.NotBefore.Compare(a.cert.NotBefore),
		cmp.Compare(a.fp, b.fp),
	)
}

// bundleOf encodes the entries in order, with their state and the time
// until the first of them expires or ends its overlap.
func bundleOf(entries []entry, overlap time.Duration, now time.Time) Result {
	res := Result{State: make(State, len(entries))}
	var changes []time.Time
	for _, e := range entries {
		res.Certificates = append(res.Certificates, e.cert)
		res.State[e.fp] = e.rec
		// A certificate expires only after NotAfter: it goes a nanosecond later.
		changes = append(changes, e.cert.NotAfter.Add(time.Nanosecond))
		if !e.rec.SupersededAt.IsZero() {
			changes = append(changes, e.rec.SupersededAt.Add(overlap))
		}
	}
	res.Bundle = Encode(res.Certificates)
	// A valid source leaves at least one certificate, so changes is not empty.
	res.RequeueAfter = max(slices.MinFunc(changes, time.Time.Compare).Sub(now), 0)
	return res
}

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
	ReasonNotIssuer  Reason = "not-issuer" // the CAs do not verify the Secret's serving certificate
)

// Verdict says whether a source may be written, and why not.
type Verdict struct {
	Reason  Reason
	Message string // explains the reason for a human, e.g. in an Event
}

// Valid reports whether the source may be written.
func (v Verdict) Valid() bool { return v.Reason == ReasonValid }

// Validate parses source and checks that it can serve as the webhook's CA at
// now. It returns the usable CAs without duplicates, in source order. One
// certificate that is not a CA rejects the whole source: a leaf in ca.crt means
// the wrong key or the wrong Secret, which a bundle of the rest would hide.
// Expired certificates are only dropped, so that a source listing its retired
// CA beside the new one keeps working; one with nothing left is rejected. A
// certificate not yet valid is accepted: the clocks of issuer, syncer and API
// server differ by seconds, and rejecting it would delay a rotation.
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
		if seen[fp] || now.After(c.NotAfter) {
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

// latestNotAfter returns the latest expiry in certs, which must not be empty.
func latestNotAfter(certs []*x509.Certificate) time.Time {
	return slices.MaxFunc(certs, func(a, b *x509.Certificate) int { return a.NotAfter.Compare(b.NotAfter) }).NotAfter
}
