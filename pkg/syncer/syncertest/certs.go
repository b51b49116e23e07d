package syncertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// Cert is a generated certificate and its key.
type Cert struct {
	Cert *x509.Certificate
	PEM  []byte
	Key  *ecdsa.PrivateKey
}

// TLSCertificate is the certificate and its key for a tls.Config: a
// self-signed CA serves as its own leaf, as Gardener's self-signed issuer
// writes it (ca.crt == tls.crt).
func (c Cert) TLSCertificate() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Fingerprint is cabundle.Fingerprint of the certificate.
func (c Cert) Fingerprint() string { return cabundle.Fingerprint(c.Cert) }

// NewCA returns a self-signed CA valid from an hour ago for 90 days, like
// Gardener's self-signed issuer writes (ca.crt == tls.crt).
func NewCA(t testing.TB, name string) Cert {
	t.Helper()
	now := time.Now()
	return NewCert(t, name, now.Add(-time.Hour), now.Add(90*24*time.Hour), true)
}

// NewCert returns a self-signed certificate valid from notBefore to
// notAfter, a CA when ca is set and a serving leaf otherwise. ECDSA P-256
// keeps generating dozens of them cheap.
func NewCert(t testing.TB, name string, notBefore, notAfter time.Time, ca bool) Cert {
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
		DNSNames:              []string{name},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  ca,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ca {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return Cert{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), Key: key}
}

// Fingerprints returns the fingerprints of the certificates in a bundle, in
// order, or nil when it does not parse.
func Fingerprints(bundle []byte) []string {
	certs, err := cabundle.Parse(bundle)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(certs))
	for _, c := range certs {
		out = append(out, cabundle.Fingerprint(c))
	}
	return out
}
