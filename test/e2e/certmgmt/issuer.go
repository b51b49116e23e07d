// Package certmgmt stands in for Gardener cert-management in the local
// environment: it issues the webhook's serving certificate the way the
// self-signed issuer with isCA: true does, into the Secret the webhook
// mounts and the cabundle-syncer watches.
package certmgmt

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// Keys of the Secret, as cert-management writes them.
const (
	CertKey = certtest.CertFile
	KeyKey  = certtest.KeyFile
	CAKey   = certtest.CAFile
)

// Issuer writes and renews one certificate Secret.
type Issuer struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
	// CommonName is the subject's common name; it defaults to the first
	// DNS name, or to Name.
	CommonName string
	// DNSNames and IPs go into the certificate's subjectAltName.
	DNSNames []string
	IPs      []net.IP
	// Validity defaults to 90 days, Gardener's default duration.
	Validity time.Duration
}

// Issued is one issued certificate. Being self-signed, its Files (the
// Secret's data) hold it as ca.crt too, as with the self-signed issuer.
type Issued = certtest.Cert

// Renew issues a new self-signed CA certificate with a new key and writes
// it to the Secret, creating the Secret if needed. Every renewal is
// therefore a CA rotation, as in production.
func (i *Issuer) Renew(ctx context.Context) (Issued, error) {
	c, err := i.Issue()
	if err != nil {
		return Issued{}, err
	}
	secrets := i.Client.CoreV1().Secrets(i.Namespace)
	s, err := secrets.Get(ctx, i.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: i.Namespace, Name: i.Name},
			Type:       corev1.SecretTypeOpaque,
			Data:       c.Files(),
		}
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
	case err == nil:
		s.Data = c.Files()
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return Issued{}, fmt.Errorf("write Secret %s/%s: %w", i.Namespace, i.Name, err)
	}
	return c, nil
}

// Issue issues a new self-signed CA certificate with a new key for the
// issuer's names, without writing it anywhere.
func (i *Issuer) Issue() (Issued, error) {
	cn := i.CommonName
	if cn == "" && len(i.DNSNames) == 0 {
		cn = i.Name
	}
	now := time.Now()
	c, err := certtest.NewCA(certtest.Options{
		CommonName: cn, // empty: the first DNS name
		DNSNames:   i.DNSNames,
		IPs:        i.IPs,
		NotBefore:  now.Add(-time.Minute),
		NotAfter:   now.Add(cmp.Or(i.Validity, certtest.DefaultValidity)),
	})
	if err != nil {
		return Issued{}, err
	}
	return *c, nil
}
