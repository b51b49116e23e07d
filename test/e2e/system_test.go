package e2e

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
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

// newSystem connects to SNATCH_TEST_KUBECONFIG when it is set, starts a
// real node when SNATCH_E2E_RUNTIME is "node", and starts the local stack
// otherwise.
func newSystem(ctx context.Context) (system, error) {
	if kc := os.Getenv(framework.KubeconfigEnv); kc != "" {
		return newClusterSystem(ctx, kc)
	}
	if os.Getenv(RuntimeEnv) == "node" {
		return newNodeSystem(ctx)
	}
	dir, err := os.MkdirTemp("", "kim-snatch-e2e-")
	if err != nil {
		return nil, err
	}
	s, err := stack.Start(ctx, stack.Options{
		Dir:            dir,
		KymaNodes:      2,
		CustomerNodes:  2,
		ProjectorDelay: 10 * time.Second,
		Progress:       func(format string, args ...any) { logf("stack: "+format, args...) },
	})
	if err != nil {
		return nil, err
	}
	return &localSystem{Stack: s, dir: dir}, nil
}

// localSystem is the local stack.
type localSystem struct {
	*stack.Stack
	dir string
}

func (l *localSystem) Clientset() kubernetes.Interface { return l.Stack.Clientset }
func (l *localSystem) KubeconfigPath() string          { return l.Cluster.KubeconfigPath }

func (l *localSystem) Renew(ctx context.Context) (string, error) {
	c, err := l.Issuer.Renew(ctx)
	if err != nil {
		return "", err
	}
	return c.Fingerprint(), nil
}

func (l *localSystem) WaitServed(ctx context.Context, fp string) error {
	return l.Stack.WaitServed(ctx, l.ProjectionDelay()+time.Minute, fp)
}

func (l *localSystem) ProjectionDelay() time.Duration { return l.Options().ProjectorDelay }
func (l *localSystem) WebhookReplicas() int           { return len(l.Webhooks) }

func (l *localSystem) StopWebhooks(context.Context) error {
	l.Stack.StopWebhooks()
	return nil
}

func (l *localSystem) KillSyncerLeader(ctx context.Context) error {
	leader, err := l.Leader(ctx, time.Minute)
	if err != nil {
		return err
	}
	leader.Kill()
	return nil
}

func (l *localSystem) RestoreSyncers(ctx context.Context) error {
	for _, r := range l.Syncers {
		if !r.Running() {
			if err := r.Start(); err != nil {
				return err
			}
			if err := r.WaitReady(ctx, time.Minute); err != nil {
				return err
			}
		}
	}
	_, err := l.Leader(ctx, time.Minute)
	return err
}

func (l *localSystem) Stop() error {
	l.Stack.Stop()
	if os.Getenv(framework.KeepEnv) != "" {
		logf("e2e: kept %s", filepath.Clean(l.dir))
		return nil
	}
	return os.RemoveAll(l.dir)
}
