package stack

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
)

// Renew renews the serving certificate as Gardener does, a CA rotation
// with a new key, and returns it with the Secret's new resourceVersion.
// The webhook replicas see it after the projector delay; the syncer at
// once.
func (s *Stack) Renew(ctx context.Context) (certmgmt.Issued, string, error) {
	c, err := s.Issuer.Renew(ctx)
	if err != nil {
		return c, "", err
	}
	sec, err := s.Clientset.CoreV1().Secrets(Namespace).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		return c, "", err
	}
	return c, sec.ResourceVersion, nil
}

func (s *Stack) currentFingerprint(ctx context.Context) string {
	return CurrentFingerprint(ctx, s.Clientset)
}

// CurrentFingerprint returns the fingerprint of the CA in the Secret, or ""
// when there is none.
func CurrentFingerprint(ctx context.Context, cs kubernetes.Interface) string {
	sec, err := cs.CoreV1().Secrets(Namespace).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	certs, err := cabundle.Parse(sec.Data[certmgmt.CAKey])
	if err != nil || len(certs) == 0 {
		return ""
	}
	return cabundle.Fingerprint(certs[0])
}

// BundleFingerprints returns the fingerprints of the certificates in the
// caBundle of every webhook entry, by entry name.
func BundleFingerprints(mwc *admissionregistrationv1.MutatingWebhookConfiguration) map[string][]string {
	out := map[string][]string{}
	for _, w := range mwc.Webhooks {
		certs, _ := cabundle.Parse(w.ClientConfig.CABundle)
		fps := []string{}
		for _, c := range certs {
			fps = append(fps, cabundle.Fingerprint(c))
		}
		out[w.Name] = fps
	}
	return out
}

// WaitBundleHas waits until every webhook entry's caBundle holds the
// certificate with fingerprint fp.
func (s *Stack) WaitBundleHas(ctx context.Context, timeout time.Duration, fp string) error {
	return WaitBundleHas(ctx, s.Clientset, timeout, fp)
}

// WaitBundleHas waits until every webhook entry's caBundle in the cluster
// of cs holds the certificate with fingerprint fp.
func WaitBundleHas(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, fp string) error {
	var last map[string][]string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = BundleFingerprints(mwc)
		for _, fps := range last {
			found := false
			for _, f := range fps {
				found = found || f == fp
			}
			if !found {
				return false, nil
			}
		}
		return len(last) > 0, nil
	})
	if err != nil {
		return errorf("caBundle does not hold %s within %s (last: %v): %w", fp, timeout, last, err)
	}
	return nil
}
