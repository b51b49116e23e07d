package framework

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
)

// secretWriters is how many Secrets CreateSecrets creates at once: enough
// to fill a namespace quickly, few enough not to trip the API server's
// limits.
const secretWriters = 8

// CreateSecrets creates n Secrets named unrelated-00000 and on, each of
// size random bytes under the key "blob", in namespace. They stand for the
// rest of a cluster's Secrets, which a cache of Secrets would hold. It
// returns the first error of a create, once every create has run.
func CreateSecrets(ctx context.Context, cs kubernetes.Interface, namespace string, n, size int) error {
	errs := make(chan error, 1)
	workqueue.ParallelizeUntil(ctx, secretWriters, n, func(i int) {
		data := make([]byte, size)
		_, _ = rand.Read(data)
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("unrelated-%05d", i)},
			Data:       map[string][]byte{"blob": data},
		}
		if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	})
	select {
	case err := <-errs:
		return fmt.Errorf("create %d Secrets in %s: %w", n, namespace, err)
	default:
		// ParallelizeUntil stops handing out Secrets once ctx is done.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("create %d Secrets in %s: %w", n, namespace, err)
		}
		return nil
	}
}
