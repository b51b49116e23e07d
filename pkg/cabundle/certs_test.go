package cabundle

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// now is the fixed clock of every test in this package.
var now = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

type testCert struct {
	cert *x509.Certificate
	pem  []byte
}

func (c testCert) fp() string { return Fingerprint(c.cert) }

// newCert creates a self-signed certificate valid from notBefore to notAfter;
// a CA unless leaf is set. ECDSA P-256 keeps the tests fast.
func newCert(t *testing.T, name string, notBefore, notAfter time.Time, leaf bool) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  !leaf,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		DNSNames:              []string{name},
	}
	if leaf {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCert{cert: cert, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// newCA creates a CA that became valid age ago and is valid for 90 days.
func newCA(t *testing.T, name string, age time.Duration) testCert {
	t.Helper()
	return newCert(t, name, now.Add(-age), now.Add(-age).Add(90*24*time.Hour), false)
}

func join(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func fingerprints(certs []*x509.Certificate) []string {
	out := make([]string, 0, len(certs))
	for _, c := range certs {
		out = append(out, Fingerprint(c))
	}
	return out
}
