package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/pkg/version"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// Keys of the Starting line alone; those of the contract are in pkg/logkeys.
const keyWorkerPool, keyPoolLabelKey, keyWeight, keyOptOutLabel = "workerPool", "poolLabelKey", "weight", "optOutLabel"

// run serves the webhook until ctx ends, then drains and returns.
func run(ctx context.Context, o Options) error {
	tuneGC()
	log := newLogger(o.Zap)
	log.Info("Starting", logkeys.Version, version.String(binaryName),
		keyWorkerPool, o.Policy.WorkerPool, keyPoolLabelKey, o.Policy.PoolLabelKey, keyWeight, o.Policy.Weight,
		keyOptOutLabel, affinity.OptOutLabel+"="+affinity.OptOutValue)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv, err := newServer(o, log, reg)
	if err != nil {
		return err
	}
	if err := srv.Serve(ctx); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("Stopped")
	return nil
}

// newLogger builds the logger of the --zap-* flags, which never samples the
// decision lines.
func newLogger(z zap.Options) logr.Logger { return cmdline.NewLogger(z, admission.LoggerName) }

// newServer wires the affinity decision behind the admission handler, behind
// the TLS server with its certificate watcher, probes and metrics on reg. It
// binds nothing; integration tests call it too.
func newServer(o Options, log logr.Logger, reg *prometheus.Registry) (*serving.Server, error) {
	mutator, err := affinity.NewMutator(o.Policy)
	if err != nil {
		return nil, err
	}
	admissionMetrics, admissionErr := admission.NewMetrics(reg)
	certMetrics, certErr := serving.NewCertMetrics(reg)
	err = errors.Join(admissionErr, certErr, admission.RegisterPolicy(reg, o.Policy), admission.RegisterBuildInfo(reg))
	if err != nil {
		return nil, err
	}
	handler, err := admission.NewHandler(admission.Options{
		Mutator: mutator, Metrics: admissionMetrics, Log: log.WithName(admission.LoggerName),
		InFlightBodyBytes: o.InFlightBodyBytes,
	})
	if err != nil {
		return nil, err
	}
	certs, err := newCertWatcher(o, log, certMetrics)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(webhookpath.MutatePod, handler)
	mux.Handle(webhookpath.MutatePodLegacy, handler)
	return serving.New(serving.Options{
		WebhookAddr:    net.JoinHostPort(o.webhookHost, strconv.Itoa(o.WebhookPort)),
		ProbeAddr:      o.HealthProbeBindAddress,
		MetricsAddr:    o.MetricsBindAddress,
		EnableHTTP2:    o.EnableHTTP2,
		Webhook:        mux,
		Certs:          certs,
		Gatherer:       reg,
		ShutdownDelay:  o.ShutdownDelay,
		RequestTimeout: o.RequestTimeout,
		MaxConnections: o.MaxConnections,
		Log:            log.WithName("serving"),
	})
}

// newCertWatcher watches the serving certificate and key of the flags.
func newCertWatcher(o Options, log logr.Logger, metrics *serving.CertMetrics) (*serving.CertWatcher, error) {
	return serving.NewCertWatcher(serving.CertWatcherOptions{
		CertFile: filepath.Join(o.CertDir, o.CertName),
		KeyFile:  filepath.Join(o.CertDir, o.KeyName),
		DNSName:  o.CertDNSName,
		Metrics:  metrics,
		Log:      log.WithName("certificates"),
	})
}

// defaultGCPercent is the webhook's GOGC unless the environment sets one: it
// lowers the RSS of a replica (one on every cluster) for little CPU, as
// docs/benchmarks.md ("GOGC=50 in the webhook") measures.
const defaultGCPercent = 50

func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}
