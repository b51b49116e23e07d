package e2e

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// The breaks of the check's items that reach into the certificate Secret
// while Gardener cert-management, which would repair them, is down.

// deleteSecret deletes the certificate Secret while Gardener
// cert-management is down, which would otherwise issue a new one at once;
// restoring creates it again with the same data, as a re-applied backup
// would, and starts cert-management again.
func deleteSecret(t *testing.T) func(context.Context) error {
	resume := pauseCertManagement(t)
	secrets := sys.Clientset().CoreV1().Secrets(stack.Namespace)
	saved := deleteSaved(t, secrets, stack.SecretName)
	return func(ctx context.Context) error {
		_, err := secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: forCreate(saved.ObjectMeta),
			Type:       saved.Type,
			Data:       saved.Data,
		}, metav1.CreateOptions{})
		return errors.Join(err, resume(ctx))
	}
}

// garbleCA cuts the DER of the CA in ca.crt in half, while Gardener
// cert-management is down: still PEM, no longer a certificate. tls.crt and
// tls.key stay as they are.
func garbleCA(t *testing.T) func(context.Context) error {
	return editSecretKey(t, certtest.CAFile, func(good []byte) []byte {
		block, _ := pem.Decode(good)
		if block == nil {
			t.Fatalf("ca.crt of Secret %s/%s is not PEM", stack.Namespace, stack.SecretName)
		}
		block.Bytes = block.Bytes[:len(block.Bytes)/2]
		return pem.EncodeToMemory(block)
	})
}

// mismatchKey puts the key of another certificate into tls.key, while
// Gardener cert-management is down, as a Secret edited by hand might end:
// each replica fails to load the pair and keeps serving its last good one.
// ca.crt and tls.crt stay as they are.
func mismatchKey(t *testing.T) func(context.Context) error {
	return editSecretKey(t, certtest.KeyFile, func([]byte) []byte {
		return certtest.MustCA(t, certtest.Options{DNSNames: []string{"other.example"}}).Files()[certtest.KeyFile]
	})
}

// emptyKeyAndRestartReplica empties tls.key while Gardener cert-management
// is down, and deletes one webhook replica: its replacement starts without
// a pair to load and is not ready, while the other keeps serving its last
// good pair and fails to reload.
func emptyKeyAndRestartReplica(t *testing.T) func(context.Context) error {
	restore := editSecretKey(t, certtest.KeyFile, func([]byte) []byte { return []byte{} })
	pods := sys.Clientset().CoreV1().Pods(stack.Namespace)
	list, err := pods.List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + stack.WebhookName})
	if err == nil && len(list.Items) == 0 {
		err = fmt.Errorf("no webhook Pod in %s", stack.Namespace)
	}
	if err == nil {
		err = pods.Delete(context.Background(), list.Items[0].Name, metav1.DeleteOptions{})
	}
	if err != nil {
		_ = restore(context.Background())
		t.Fatal(err)
	}
	return restore
}

// editSecretKey writes edit's value of the Secret's key while Gardener
// cert-management is down, and returns what writes the old value back and
// starts cert-management again.
func editSecretKey(t *testing.T, key string, edit func(good []byte) []byte) func(context.Context) error {
	return editSecret(t, func(data map[string][]byte) { data[key] = edit(data[key]) })
}

// caNotRenewed writes a CA with left of its validity left into the Secret
// while Gardener cert-management is down, as its selfSigned issuer would
// have issued it for the Certificate, 90 days long: the Certificate's
// renewal did not happen. As after any renewal, the syncer adds the CA
// beside the old one in the caBundle, and each replica loads the pair.
func caNotRenewed(left time.Duration) func(t *testing.T) func(context.Context) error {
	return func(t *testing.T) func(context.Context) error {
		svc := stack.ServiceName + "." + stack.Namespace + ".svc"
		notAfter := time.Now().Add(left)
		ca := certtest.MustCA(t, certtest.Options{CommonName: stack.ServiceName + "." + stack.Namespace,
			DNSNames: []string{svc, svc + ".cluster.local"}, NotBefore: notAfter.Add(-90 * 24 * time.Hour), NotAfter: notAfter})
		return editSecret(t, func(data map[string][]byte) { maps.Copy(data, ca.Files()) })
	}
}

// editSecret has edit change the Secret's data while Gardener
// cert-management is down, and returns what writes the old data back and
// starts cert-management again.
func editSecret(t *testing.T, edit func(data map[string][]byte)) func(context.Context) error {
	ctx := context.Background()
	resume := pauseCertManagement(t)
	good := map[string][]byte{}
	if err := setSecretData(ctx, sys.Clientset(), func(data map[string][]byte) {
		maps.Copy(good, data)
		edit(data)
	}); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		put := func(data map[string][]byte) {
			clear(data)
			maps.Copy(data, good)
		}
		return errors.Join(setSecretData(ctx, sys.Clientset(), put), resume(ctx))
	}
}

// secretCAFingerprint is the fingerprint of the first CA in the Secret.
func secretCAFingerprint(t *testing.T) string {
	t.Helper()
	fp := stack.CurrentFingerprint(context.Background(), sys.Clientset())
	if fp == "" {
		t.Fatalf("no CA in Secret %s/%s", stack.Namespace, stack.SecretName)
	}
	return fp
}

// setSecretData has edit change the Secret's data, and writes it.
func setSecretData(ctx context.Context, cs kubernetes.Interface, edit func(data map[string][]byte)) error {
	secrets := cs.CoreV1().Secrets(stack.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := secrets.Get(ctx, stack.SecretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		edit(sec.Data)
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
}
