package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// run wires the syncer from validated options and runs it until ctx ends or
// leadership is lost. Losing the Lease is an error on purpose: the process
// exits and restarts as a standby, instead of carrying on with state that
// another leader may already have changed.
func run(ctx context.Context, o Options) error {
	log := zap.New(zap.UseFlagOptions(&o.Zap))
	// controller-runtime and client-go (leader election among them) log
	// through their own package loggers; route both to the same sink.
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	log.Info("Starting", "version", version.String(binaryName),
		"secret", o.Syncer.SecretNamespace+"/"+o.Syncer.SecretName, "caKey", o.Syncer.CAKey,
		"webhookConfiguration", o.Syncer.WebhookConfiguration, "caOverlap", o.Syncer.Overlap,
		"leaderElect", o.LeaderElect, "metricsSecure", o.MetricsSecure)

	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	// controller-runtime's registry is the one its metrics server serves,
	// next to the workqueue, client and Go runtime metrics.
	metrics, err := syncer.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	mgrOpts := ctrl.Options{
		Logger:                        log,
		Cache:                         syncer.CacheOptions(o.Syncer),
		Metrics:                       metricsServerOptions(o),
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		LeaderElection:                o.LeaderElect,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
	}
	var lock *resourcelock.LeaseLock
	if o.LeaderElect {
		identity, err := leaderIdentity(os.Getenv, os.Hostname)
		if err != nil {
			return err
		}
		if lock, err = leaderLock(cfg, o, identity); err != nil {
			return err
		}
		mgrOpts.LeaderElectionResourceLockInterface = lock
		log.Info("Leader election", "lease", o.LeaderElectionNamespace+"/"+o.LeaderElectionID, "identity", identity)
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if lock != nil {
		// Leader election records "became leader" and the like through
		// client-go's core/v1 events, which only the deprecated recorder
		// speaks. The manager exists only now, and elects only in Start.
		lock.LockConfig.EventRecorder = mgr.GetEventRecorderFor(lock.LockConfig.Identity) //nolint:staticcheck // see above
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

// metricsServerOptions configures the /metrics endpoint. With
// --metrics-secure it serves HTTPS with a certificate that controller-runtime
// generates at startup (there is no certificate directory), and admits only
// requests whose bearer token the API server authenticates (TokenReview) and
// whose user may get the non-resource URL /metrics (SubjectAccessReview).
// HTTP/1.1 only, as on the webhook: Prometheus needs no more, and it keeps
// the endpoint out of HTTP/2's stream-reset attacks.
func metricsServerOptions(o Options) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.MetricsBindAddress}
	if o.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
		opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return opts
}

// podNameEnv is set through the downward API (metadata.name) in
// deploy/syncer/deployment.yaml.
const podNameEnv = "POD_NAME"

// leaderIdentity names this replica in the Lease as syncer.LeaderIdentity
// does, with the name from $POD_NAME and, without it, the hostname.
//
// controller-runtime's own lock uses the hostname. That is not the Pod
// name: the kernel caps a hostname at 63 characters while a Pod name may be
// longer, and processes started outside a cluster share one hostname. With
// the Pod name, `cabundle-syncer check` finds the leader's Pod from the
// Lease (syncer.HolderPodName), and an operator sees at a glance
// which replica leads.
func leaderIdentity(getenv func(string) string, hostname func() (string, error)) (string, error) {
	name := getenv(podNameEnv)
	if name == "" {
		h, err := hostname()
		if err != nil {
			return "", fmt.Errorf("leader identity: $%s is empty and the hostname is unknown: %w", podNameEnv, err)
		}
		name = h
	}
	return syncer.LeaderIdentity(name), nil
}

// leaderLock is the Lease lock controller-runtime would build, with
// identity as its holder: its own client, named "leader-election" in the
// API server's logs, whose requests time out after half the renew deadline
// (at least a second) so that one hung request cannot cost the leadership.
// The caller sets LockConfig.EventRecorder once the manager exists.
func leaderLock(cfg *rest.Config, o Options, identity string) (*resourcelock.LeaseLock, error) {
	lcfg := rest.AddUserAgent(cfg, "leader-election")
	lcfg.Timeout = max(o.RenewDeadline/2, time.Second)
	client, err := coordinationv1client.NewForConfig(lcfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	return &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaderElectionNamespace, Name: o.LeaderElectionID},
		Client:     client,
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}, nil
}

// Client-side rate limit of the syncer's requests: controller-runtime's
// defaults for a manager. client-go's own, 5 per second with a burst of
// 10, delayed each caBundle write by about 200 ms once a few rotations
// and the Lease renewals had used up the burst.
const (
	clientQPS   = 20
	clientBurst = 30
)

// restConfig loads the named kubeconfig, or, without one, the in-cluster
// configuration and then the usual $KUBECONFIG and ~/.kube/config lookup.
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := loadRestConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = clientQPS, clientBurst
	return cfg, nil
}

func loadRestConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
}
