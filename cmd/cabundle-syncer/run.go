package main

import (
	"context"
	"crypto/tls"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
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
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
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

// restConfig loads the named kubeconfig, or, without one, the in-cluster
// configuration and then the usual $KUBECONFIG and ~/.kube/config lookup.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
}
