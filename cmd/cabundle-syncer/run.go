package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// Keys of the Starting and Leader election lines alone; the contract's are in pkg/logkeys.
const (
	keyCAKey, keyCAOverlap, keyLeaderElect, keyMetricsSecure = "caKey", "caOverlap", "leaderElect", "metricsSecure"
	keyLease, keyIdentity                                    = "lease", "identity"
	keyReleaseFieldManagers                                  = "releaseFieldManagers"
	// podNameEnv is set through the downward API in deploy/syncer/deployment.yaml.
	podNameEnv = "POD_NAME"
)

// run wires the syncer and runs it until ctx ends or the Lease is lost,
// which is an error on purpose: the process restarts as a standby rather
// than carry on with state that another leader may have changed.
func run(ctx context.Context, o Options) error {
	log := cmdline.NewLogger(o.Zap)
	// controller-runtime and client-go (leader election) have their own loggers.
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	log.Info("Starting", logkeys.Version, version.String(binaryName),
		logkeys.Secret, o.Syncer.SecretNamespace+"/"+o.Syncer.SecretName, keyCAKey, o.Syncer.CAKey,
		logkeys.WebhookConfiguration, o.Syncer.WebhookConfiguration, keyCAOverlap, o.Syncer.Overlap,
		keyReleaseFieldManagers, o.Syncer.ReleaseFieldManagers,
		keyLeaderElect, o.LeaderElect, keyMetricsSecure, o.MetricsSecure)
	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	metrics, err := syncer.NewMetrics(ctrlmetrics.Registry) // the registry that controller-runtime serves
	if err != nil {
		return err
	}
	if err := syncer.RegisterBuildInfo(ctrlmetrics.Registry); err != nil {
		return err
	}
	mgr, err := newManager(cfg, o, log)
	if err != nil {
		return err
	}
	if err := syncer.SetupWithManager(ctx, mgr, o.Syncer, metrics); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("cache", syncer.CacheSyncedCheck(mgr.GetCache())); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	log.Info("Stopped")
	return nil
}

func newManager(cfg *rest.Config, o Options, log logr.Logger) (manager.Manager, error) {
	mgrOpts := ctrl.Options{
		Logger:                        log,
		Cache:                         syncer.CacheOptions(o.Syncer),
		Metrics:                       metricsServerOptions(o),
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
	}
	if o.LeaderElect {
		lock, err := leaderLock(cfg, o, log)
		if err != nil {
			return nil, err
		}
		mgrOpts.LeaderElectionResourceLockInterface = lock
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if lock, ok := mgrOpts.LeaderElectionResourceLockInterface.(*resourcelock.LeaseLock); ok {
		// Leader election's events ("became leader") are client-go's core/v1
		// events, which only the manager's deprecated recorder speaks.
		lock.LockConfig.EventRecorder = mgr.GetEventRecorderFor(lock.LockConfig.Identity) //nolint:staticcheck // see above
	}
	return mgr, nil
}

// metricsServerOptions configures /metrics: with --metrics-secure, over a
// certificate generated at startup, HTTP/1.1 only, as the webhook.
func metricsServerOptions(o Options) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.MetricsBindAddress}
	if o.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return opts
}

// leaderIdentity names this replica in the Lease (syncer.LeaderIdentity)
// after $POD_NAME, which unlike the hostname is never cut to 63 characters,
// or else the hostname, so that check and operators find the leader's Pod.
func leaderIdentity(getenv func(string) string, hostname func() (string, error)) (string, error) {
	if name := getenv(podNameEnv); name != "" {
		return syncer.LeaderIdentity(name), nil
	}
	name, err := hostname()
	if err != nil {
		return "", fmt.Errorf("leader identity: $%s is empty and the hostname is unknown: %w", podNameEnv, err)
	}
	return syncer.LeaderIdentity(name), nil
}

// leaderLock is the Lease lock controller-runtime would build, held by
// leaderIdentity: requests time out after half the renew deadline (at least
// a second), so that one hung request cannot cost the leadership.
func leaderLock(cfg *rest.Config, o Options, log logr.Logger) (*resourcelock.LeaseLock, error) {
	identity, err := leaderIdentity(os.Getenv, os.Hostname)
	if err != nil {
		return nil, err
	}
	lcfg := rest.AddUserAgent(cfg, "leader-election")
	lcfg.Timeout = max(o.RenewDeadline/2, time.Second)
	client, err := coordinationv1client.NewForConfig(lcfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	log.Info("Leader election", keyLease, o.LeaderElectionNamespace+"/"+o.LeaderElectionID, keyIdentity, identity)
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaderElectionNamespace, Name: o.LeaderElectionID},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}, nil
}

// restConfig loads the named kubeconfig, or else the in-cluster
// configuration, $KUBECONFIG and ~/.kube/config. The rate limit is
// controller-runtime's (docs/benchmarks.md, "The syncer's client rate limit").
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, _, err := clusterFlags{Kubeconfig: kubeconfig}.load()
	if err != nil {
		return nil, err
	}
	return withRateLimit(cfg), nil
}

// withRateLimit sets controller-runtime's client rate limit on cfg.
func withRateLimit(cfg *rest.Config) *rest.Config {
	cfg.QPS, cfg.Burst = 20, 30
	return cfg
}
