package certtest

import (
	"bytes"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestNewCAIsASelfSignedServingCA(t *testing.T) {
	ca := MustCA(t, Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
	c := ca.Cert
	if !c.IsCA || !c.BasicConstraintsValid || c.KeyUsage&x509.KeyUsageCertSign == 0 || c.CheckSignatureFrom(c) != nil {
		t.Errorf("not a self-signed CA: IsCA %v, key usage %b", c.IsCA, c.KeyUsage)
	}
	if c.Subject.CommonName != "snatch-webhook.kyma-system.svc" {
		t.Errorf("common name %q, want the first DNS name", c.Subject.CommonName)
	}
	if ca.Key.Curve != elliptic.P256() {
		t.Errorf("key curve %s, want P-256", ca.Key.Curve.Params().Name)
	}
	if !bytes.Equal(ca.CAPEM, ca.CertPEM) {
		t.Error("ca.crt is not tls.crt")
	}
	if age, left := time.Since(c.NotBefore), time.Until(c.NotAfter); age < 59*time.Minute || age > 61*time.Minute || left < DefaultValidity-time.Minute || left > DefaultValidity {
		t.Errorf("valid from %s to %s, want from an hour ago for %s", c.NotBefore, c.NotAfter, DefaultValidity)
	}
	// The CA serves itself, as with cert-management's selfSigned issuer.
	if _, err := c.Verify(x509.VerifyOptions{DNSName: "snatch-webhook.kyma-system.svc", Roots: ca.Pool()}); err != nil {
		t.Errorf("the CA does not verify as its own serving certificate: %v", err)
	}
	if other := MustCA(t, Options{}); other.Cert.SerialNumber.Cmp(c.SerialNumber) == 0 || other.Cert.Subject.CommonName != "kim-snatch test" {
		t.Errorf("second CA: serial %s (first %s), common name %q", other.Cert.SerialNumber, c.SerialNumber, other.Cert.Subject.CommonName)
	}
}

func TestNewSelfSignedIsNoCA(t *testing.T) {
	nb, na := time.Now().Add(-48*time.Hour).Truncate(time.Second), time.Now().Add(-time.Hour).Truncate(time.Second)
	c := MustSelfSigned(t, Options{CommonName: "leaf", NotBefore: nb, NotAfter: na})
	if c.Cert.IsCA || c.Cert.CheckSignatureFrom(c.Cert) == nil {
		t.Error("a self-signed leaf is a CA or signs itself as one")
	}
	if !c.Cert.NotBefore.Equal(nb) || !c.Cert.NotAfter.Equal(na) {
		t.Errorf("valid from %s to %s, want %s to %s", c.Cert.NotBefore, c.Cert.NotAfter, nb, na)
	}
	if _, err := c.Issue(Options{}); err == nil {
		t.Error("a certificate that is no CA issued one")
	}
}

func TestIssueSignsAServingCertificate(t *testing.T) {
	ca := MustCA(t, Options{CommonName: "kim-snatch test CA"})
	leaf := ca.MustIssue(t, Localhost(7))
	c := leaf.Cert
	if c.IsCA || c.SerialNumber.Int64() != 7 || !bytes.Equal(leaf.CAPEM, ca.CertPEM) {
		t.Errorf("IsCA %v, serial %s, ca.crt is the CA's: %v", c.IsCA, c.SerialNumber, bytes.Equal(leaf.CAPEM, ca.CertPEM))
	}
	if left := time.Until(c.NotAfter); left < 7*time.Hour-time.Minute || left > 7*time.Hour {
		t.Errorf("expires in %s, want the serial in hours", left)
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: ca.Pool()}); err != nil {
			t.Errorf("does not verify for %s: %v", name, err)
		}
	}
	if err := c.VerifyHostname("example.com"); err == nil {
		t.Error("verifies for a name it was not issued for")
	}
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil || !bytes.Equal(pair.Certificate[0], leaf.TLSCertificate().Certificate[0]) {
		t.Errorf("tls.crt and tls.key do not make the TLS certificate: %v", err)
	}
	files := leaf.Files()
	if len(files) != 3 || !bytes.Equal(files[CertFile], leaf.CertPEM) || !bytes.Equal(files[KeyFile], leaf.KeyPEM) || !bytes.Equal(files[CAFile], ca.CertPEM) {
		t.Errorf("files %v, want tls.crt, tls.key and the CA's ca.crt", slices.Sorted(maps.Keys(files)))
	}
	if ip := net.ParseIP("::1"); !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
		t.Errorf("IPs %v", c.IPAddresses)
	}
}

func TestFingerprintsKeepTheBundlesOrder(t *testing.T) {
	a, b := MustCA(t, Options{}), MustCA(t, Options{})
	if got, want := Fingerprints(append(append([]byte{}, b.CertPEM...), a.CertPEM...)), []string{b.Fingerprint(), a.Fingerprint()}; !slices.Equal(got, want) {
		t.Errorf("Fingerprints = %v, want %v", got, want)
	}
	if got := Fingerprints([]byte("junk")); got != nil {
		t.Errorf("Fingerprints(junk) = %v, want nil", got)
	}
}

func TestWriteAtomicSwapsDataAsKubeletDoes(t *testing.T) {
	dir := t.TempDir()
	MustWriteAtomic(t, dir, map[string][]byte{"tls.crt": []byte("one")})
	first, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	MustWriteAtomic(t, dir, map[string][]byte{"tls.crt": []byte("two")})
	if link, err := os.Readlink(filepath.Join(dir, "tls.crt")); err != nil || link != filepath.Join("..data", "tls.crt") {
		t.Errorf("tls.crt links to %q (%v), want ..data/tls.crt", link, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "tls.crt")); err != nil || string(data) != "two" {
		t.Errorf("tls.crt holds %q (%v), want the second write", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the first write's directory %s is still there: %v", first, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // ..data, one timestamped directory, tls.crt
		t.Errorf("%d entries in the directory, want 3", len(entries))
	}
}
