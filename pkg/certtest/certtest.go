package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// DefaultValidity is how long a certificate is valid unless Options say
// otherwise: Gardener cert-management's default duration.
const DefaultValidity = 90 * 24 * time.Hour

// Options describe a certificate. The zero value is valid.
type Options struct {
	// CommonName is the subject's common name; it defaults to the first
	// DNS name, or to "kim-snatch test".
	CommonName string
	// DNSNames and IPs go into the subjectAltName.
	DNSNames []string
	IPs      []net.IP
	// Serial is the serial number; 0 picks a random one.
	Serial int64
	// NotBefore defaults to an hour ago, NotAfter to DefaultValidity after
	// now.
	NotBefore, NotAfter time.Time
	// ExtKeyUsage defaults to server authentication.
	ExtKeyUsage []x509.ExtKeyUsage
}

// Localhost returns the Options of a serving certificate for localhost,
// 127.0.0.1 and ::1 with the given serial. It expires serial hours from
// now, so that certificates issued within the same second still differ in
// notAfter.
func Localhost(serial int64) Options {
	return Options{
		CommonName: "kim-snatch-webhook",
		DNSNames:   []string{"localhost"},
		IPs:        []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		Serial:     serial,
		NotAfter:   time.Now().Add(time.Duration(serial) * time.Hour),
	}
}

// Cert is a certificate and its key.
type Cert struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertPEM and KeyPEM are the certificate and its key in PEM, as tls.crt
	// and tls.key hold them.
	CertPEM, KeyPEM []byte
	// CAPEM is the certificate of the CA that signed this one, as ca.crt
	// holds it: CertPEM itself for a self-signed certificate.
	CAPEM []byte
}

// NewCA returns a self-signed CA, as cert-management's selfSigned issuer
// with isCA: true issues it: a CA that can sign leaves with Issue and is at
// the same time the serving certificate for the names in o.
func NewCA(o Options) (*Cert, error) { return create(o, true, nil) }

// NewSelfSigned returns a self-signed serving certificate that is no CA, as
// cert-management's selfSigned issuer without isCA issues it.
func NewSelfSigned(o Options) (*Cert, error) { return create(o, false, nil) }

// Issue returns a serving certificate for the names in o, signed by c.
func (c *Cert) Issue(o Options) (*Cert, error) {
	if !c.Cert.IsCA {
		return nil, errors.New("certtest: issue: the signer is no CA")
	}
	return create(o, false, c)
}

// IssueCA returns an intermediate CA for the names in o, signed by c.
func (c *Cert) IssueCA(o Options) (*Cert, error) {
	if !c.Cert.IsCA {
		return nil, errors.New("certtest: issue: the signer is no CA")
	}
	return create(o, true, c)
}

// MustCA is NewCA that fails t on error.
func MustCA(t testing.TB, o Options) *Cert {
	t.Helper()
	return must(t)(NewCA(o))
}

// MustSelfSigned is NewSelfSigned that fails t on error.
func MustSelfSigned(t testing.TB, o Options) *Cert {
	t.Helper()
	return must(t)(NewSelfSigned(o))
}

// MustIssue is Issue that fails t on error.
func (c *Cert) MustIssue(t testing.TB, o Options) *Cert {
	t.Helper()
	return must(t)(c.Issue(o))
}

// MustIssueCA is IssueCA that fails t on error.
func (c *Cert) MustIssueCA(t testing.TB, o Options) *Cert {
	t.Helper()
	return must(t)(c.IssueCA(o))
}

// TLSCertificate returns the certificate and its key for a tls.Config.
func (c *Cert) TLSCertificate() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
}

// Pool returns a pool that trusts c; use it with the CA's Cert.
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Cert)
	return p
}

// Fingerprint identifies the certificate as the cabundle-syncer does.
func (c *Cert) Fingerprint() string { return cabundle.Fingerprint(c.Cert) }

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

// create makes a certificate for o, a CA when isCA is set, signed by
// signer or self-signed when signer is nil.
func create(o Options, isCA bool, signer *Cert) (*Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := serialOf(o)
	if err != nil {
		return nil, err
	}
	notBefore, notAfter := validityOf(o)
	cn := commonNameOf(o)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		DNSNames:              o.DNSNames,
		IPAddresses:           o.IPs,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		BasicConstraintsValid: true,
		IsCA:                  isCA,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           o.ExtKeyUsage,
	}
	if tmpl.ExtKeyUsage == nil {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	if isCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	parent, parentKey := tmpl, key
	if signer != nil {
		parent, parentKey = signer.Cert, signer.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("certtest: create certificate %q: %w", cn, err)
	}
	return encode(der, key, signer)
}

// encode parses der and keeps it with key in the PEM encodings a Cert
// carries; its CA is signer, or itself when signer is nil.
func encode(der []byte, key *ecdsa.PrivateKey, signer *Cert) (*Cert, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	c := &Cert{
		Cert:    cert,
		Key:     key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	c.CAPEM = c.CertPEM
	if signer != nil {
		c.CAPEM = signer.CertPEM
	}
	return c, nil
}

// serialOf is o's serial number, or 127 random bits, positive and non-zero,
// as RFC 5280 asks.
func serialOf(o Options) (*big.Int, error) {
	if o.Serial != 0 {
		return big.NewInt(o.Serial), nil
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	return serial.Add(serial, big.NewInt(1)), nil
}

// validityOf is o's validity, from an hour ago for DefaultValidity where
// o leaves it unset.
func validityOf(o Options) (notBefore, notAfter time.Time) {
	now := time.Now()
	notBefore, notAfter = o.NotBefore, o.NotAfter
	if notBefore.IsZero() {
		notBefore = now.Add(-time.Hour)
	}
	if notAfter.IsZero() {
		notAfter = now.Add(DefaultValidity)
	}
	return notBefore, notAfter
}

// commonNameOf is o's common name, else its first DNS name.
func commonNameOf(o Options) string {
	switch {
	case o.CommonName != "":
		return o.CommonName
	case len(o.DNSNames) > 0:
		return o.DNSNames[0]
	default:
		return "kim-snatch test"
	}
}

// must turns a constructor's error into a failure of t.
func must(t testing.TB) func(*Cert, error) *Cert {
	return func(c *Cert, err error) *Cert {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}
