package e2e

import (
	"context"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// system is what the suite needs from an installation. The local stack
// and a cluster with deploy/ applied (kind) each provide it, so that the
// scenarios themselves do not know where they run.
type system interface {
	Clientset() kubernetes.Interface
	KubeconfigPath() string
	// Renew rotates the CA as Gardener does; it returns the new CA's
	// fingerprint.
	Renew(ctx context.Context) (fingerprint string, err error)
	// WaitServed waits until every webhook replica serves the certificate
	// with the fingerprint.
	WaitServed(ctx context.Context, fingerprint string) error
	// ProjectionDelay is how long webhook replicas lag behind the Secret.
	ProjectionDelay() time.Duration
	WaitBundleHas(ctx context.Context, timeout time.Duration, fingerprint string) error
	SetCAOverlap(ctx context.Context, overlap time.Duration) error
	StopWebhooks(ctx context.Context) error
	StartWebhooks(ctx context.Context) error
	WebhookReplicas() int
	RestartWebhook(ctx context.Context, i int) error
	KillSyncerLeader(ctx context.Context) error
	RestoreSyncers(ctx context.Context) error
	Stop() error
}

// newSystem connects to SNATCH_TEST_KUBECONFIG when it is set, such as the
// kind cluster of `make e2e-kind`, and starts the real node otherwise.
func newSystem(ctx context.Context) (system, error) {
	if kc := os.Getenv(framework.KubeconfigEnv); kc != "" {
		return newClusterSystem(ctx, kc)
	}
	return newNodeSystem(ctx)
}
