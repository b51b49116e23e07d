package stack

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// CurrentFingerprint returns the fingerprint of the CA in the Secret, or ""
// when there is none.
func CurrentFingerprint(ctx context.Context, cs kubernetes.Interface) string {
	return Fingerprint(ctx, cs, Namespace, SecretName)
}

// Fingerprint returns the fingerprint of the first CA in ca.crt of Secret
// ns/name, or "" when there is none.
func Fingerprint(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	certs, err := cabundle.Parse(sec.Data[certtest.CAFile])
	if err != nil || len(certs) == 0 {
		return ""
	}
	return cabundle.Fingerprint(certs[0])
}

// WaitBundleHas waits until every webhook entry's caBundle in the cluster
// of cs holds the certificate with fingerprint fp.
func WaitBundleHas(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, fp string) error {
	var last [][]string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = last[:0]
		for _, b := range syncertest.Bundles(mwc) {
			last = append(last, certtest.Fingerprints(b))
		}
		return syncertest.EveryBundleHas(mwc, fp), nil
	})
	if err != nil {
		return fmt.Errorf("caBundle does not hold %s within %s (fingerprints per entry: %v): %w", fp, timeout, last, err)
	}
	return nil
}
