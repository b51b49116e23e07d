package stack

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
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

// bundlePoll is how often WaitBundleHas reads the webhook configuration:
// its callers log how soon the caBundle held the CA.
const bundlePoll = 20 * time.Millisecond

// WaitBundleHas waits until every webhook entry's caBundle in the cluster
// of cs holds the certificate with fingerprint fp.
func WaitBundleHas(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, fp string) error {
	return poll.Until(ctx, "every caBundle to hold "+fp, func(ctx context.Context) error {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !syncertest.EveryBundleHas(mwc, fp) {
			var per [][]string
			for _, b := range syncertest.Bundles(mwc) {
				per = append(per, certtest.Fingerprints(b))
			}
			return fmt.Errorf("fingerprints per entry: %v", per)
		}
		return nil
	}, poll.Timeout(timeout), poll.Interval(bundlePoll))
}
