package cabundle_test

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// The oracle of each case is how the certificates were made: which CA signed
// what, when it is valid, and for what use.
func TestVerifyServingAcceptsOnlyACAThatIssuedTheServingCertificate(t *testing.T) {
	now := time.Now()
	root := certtest.MustCA(t, certtest.Options{CommonName: "root"})
	other := certtest.MustCA(t, certtest.Options{CommonName: "other"})
	intermediate := root.MustIssueCA(t, certtest.Options{CommonName: "intermediate"})
	selfSigned := certtest.MustCA(t, certtest.Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
	leaf := root.MustIssue(t, certtest.Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
	viaIntermediate := intermediate.MustIssue(t, certtest.Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
	expired := root.MustIssue(t, certtest.Options{NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Minute)})
	// Issued a few seconds ahead of the syncer's clock.
	justIssued := root.MustIssue(t, certtest.Options{NotBefore: now.Add(3 * time.Second)})
	clientOnly := root.MustIssue(t, certtest.Options{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})

	tests := []struct {
		name    string
		cas     []*certtest.Cert
		serving []byte
		want    cabundle.Reason
	}{
		{name: "self_signed_ca_serving_itself_is_accepted", cas: []*certtest.Cert{selfSigned}, serving: selfSigned.CertPEM, want: cabundle.ReasonValid},
		{name: "serving_certificate_issued_by_the_ca_is_accepted", cas: []*certtest.Cert{root}, serving: leaf.CertPEM, want: cabundle.ReasonValid},
		{name: "issuer_among_two_cas_is_accepted", cas: []*certtest.Cert{other, root}, serving: leaf.CertPEM, want: cabundle.ReasonValid},
		{name: "intermediate_in_tls_crt_is_accepted", cas: []*certtest.Cert{root}, serving: append(append([]byte{}, viaIntermediate.CertPEM...), intermediate.CertPEM...), want: cabundle.ReasonValid},
		{name: "not_yet_valid_by_seconds_is_accepted", cas: []*certtest.Cert{root}, serving: justIssued.CertPEM, want: cabundle.ReasonValid},
		{name: "another_cas_certificate_is_refused", cas: []*certtest.Cert{other}, serving: leaf.CertPEM, want: cabundle.ReasonNotIssuer},
		{name: "another_self_signed_ca_is_refused", cas: []*certtest.Cert{other}, serving: selfSigned.CertPEM, want: cabundle.ReasonNotIssuer},
		{name: "intermediate_missing_from_tls_crt_is_refused", cas: []*certtest.Cert{root}, serving: viaIntermediate.CertPEM, want: cabundle.ReasonNotIssuer},
		{name: "expired_serving_certificate_is_refused", cas: []*certtest.Cert{root}, serving: expired.CertPEM, want: cabundle.ReasonNotIssuer},
		{name: "not_for_server_authentication_is_refused", cas: []*certtest.Cert{root}, serving: clientOnly.CertPEM, want: cabundle.ReasonNotIssuer},
		{name: "tls_crt_missing_is_refused", cas: []*certtest.Cert{root}, serving: nil, want: cabundle.ReasonNotIssuer},
		{name: "tls_crt_garbage_is_refused", cas: []*certtest.Cert{root}, serving: []byte("-----BEGIN CERTIFICATE-----\ngarbage\n"), want: cabundle.ReasonNotIssuer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cas := make([]*x509.Certificate, 0, len(tt.cas))
			for _, c := range tt.cas {
				cas = append(cas, c.Cert)
			}
			v := cabundle.VerifyServing(cas, tt.serving, now)
			if v.Reason != tt.want {
				t.Fatalf("reason = %q (%s), want %q", v.Reason, v.Message, tt.want)
			}
			if v.Message == "" {
				t.Error("verdict has no message")
			}
		})
	}
}

// Merge writes nothing from a source that does not verify the Secret's
// serving certificate, however valid the CA is on its own.
func TestMergeRefusesACAThatDoesNotIssueTheServingCertificate(t *testing.T) {
	now := time.Now()
	inPlace := certtest.MustCA(t, certtest.Options{CommonName: "in-place"})
	stranger := certtest.MustCA(t, certtest.Options{CommonName: "stranger"})
	res := cabundle.Merge(cabundle.Input{Source: stranger.CertPEM, Serving: inPlace.CertPEM, Current: [][]byte{inPlace.CertPEM}, Overlap: time.Hour, Now: now})
	if res.Verdict.Reason != cabundle.ReasonNotIssuer || res.Bundle != nil || res.State != nil {
		t.Fatalf("verdict %s, bundle of %d bytes, state %v; want %q and nothing to write", res.Verdict, len(res.Bundle), res.State, cabundle.ReasonNotIssuer)
	}
	if !strings.Contains(res.Verdict.Message, inPlace.Fingerprint()) {
		t.Errorf("message %q does not name the serving certificate sha256 %s", res.Verdict.Message, inPlace.Fingerprint())
	}
}
