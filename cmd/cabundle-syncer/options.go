package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// Options are the flags of the syncer, parsed and not yet acted on.
type Options struct {
	// Syncer names the Secret, its key, the MutatingWebhookConfiguration
	// and the overlap.
	Syncer syncer.Config

	// LeaderElect runs the Lease election; only the leader writes.
	LeaderElect bool
	// LeaderElectionNamespace and LeaderElectionID name the Lease.
	LeaderElectionNamespace string
	LeaderElectionID        string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader
	// election timings. A standby takes over at most LeaseDuration after the
	// leader died; a leader that shuts down releases the Lease, and a standby
	// notices within about RetryPeriod.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// MetricsBindAddress and HealthProbeBindAddress are host:port, or "0"
	// to disable.
	MetricsBindAddress     string
	HealthProbeBindAddress string
	// MetricsSecure serves /metrics over HTTPS, with a self-signed
	// certificate, to clients that authenticate with a bearer token
	// (TokenReview) and may get the path /metrics (SubjectAccessReview).
	// Without it, /metrics is plain HTTP and open to anyone who reaches it.
	MetricsSecure bool

	// Kubeconfig is a kubeconfig file; empty means in-cluster, then the
	// usual kubeconfig lookup.
	Kubeconfig string

	// Zap configures the logger.
	Zap zap.Options

	// Version asks for the version instead of a run.
	Version bool
}

// defaultOptions returns the options with every flag at its default.
func defaultOptions() Options {
	return Options{
		Syncer: syncer.Config{
			SecretNamespace:      syncer.DefaultNamespace,
			SecretName:           syncer.DefaultSecretName,
			CAKey:                syncer.DefaultCAKey,
			WebhookConfiguration: syncer.DefaultWebhookConfiguration,
			Overlap:              time.Hour,
		},
		LeaderElect:             true,
		LeaderElectionNamespace: syncer.DefaultNamespace,
		LeaderElectionID:        syncer.DefaultLeaseName,
		// client-go's recommended values, as kube-controller-manager uses.
		LeaseDuration:          15 * time.Second,
		RenewDeadline:          10 * time.Second,
		RetryPeriod:            2 * time.Second,
		MetricsBindAddress:     ":8080",
		HealthProbeBindAddress: ":8081",
		MetricsSecure:          true,
		Zap:                    zap.Options{},
	}
}

// bindFlags registers every flag on fs, writing into o. The defaults shown
// in --help are the values o holds when called.
func (o *Options) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Syncer.SecretNamespace, "secret-namespace", o.Syncer.SecretNamespace, "Namespace of the Secret that holds the CA.")
	fs.StringVar(&o.Syncer.SecretName, "secret-name", o.Syncer.SecretName, "Name of the Secret that holds the CA.")
	fs.StringVar(&o.Syncer.CAKey, "ca-key", o.Syncer.CAKey, "Key in the Secret's data that holds the CA in PEM.")
	fs.StringVar(&o.Syncer.WebhookConfiguration, "webhook-configuration", o.Syncer.WebhookConfiguration, "Name of the MutatingWebhookConfiguration whose caBundle is kept.")
	fs.DurationVar(&o.Syncer.Overlap, "ca-overlap", o.Syncer.Overlap, "How long a CA stays in the caBundle after it left the Secret; 0 replaces the bundle at every rotation.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader through a Lease; only the leader writes.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "How long standbys wait after the last renewal before they take the Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline, "How long the leader keeps trying to renew before it gives up leading and exits.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod, "How often candidates try to acquire or renew the Lease.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the /metrics endpoint; 0 disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve /metrics over HTTPS with a self-signed certificate, only to clients whose bearer token may get /metrics (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of the /healthz and /readyz endpoints; 0 disables them.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; empty means in-cluster, then $KUBECONFIG and ~/.kube/config.")
	fs.BoolVar(&o.Version, "version", o.Version, "Print the version and exit.")
	o.Zap.BindFlags(fs)
}

// Validate reports every option that cannot work, all at once.
func (o Options) Validate() error {
	errs := []error{o.Syncer.Validate()}
	if o.LeaderElect {
		if msgs := validation.IsDNS1123Label(o.LeaderElectionNamespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--leader-election-namespace %q: %s", o.LeaderElectionNamespace, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsDNS1123Subdomain(o.LeaderElectionID); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--leader-election-id %q: %s", o.LeaderElectionID, strings.Join(msgs, "; ")))
		}
		errs = append(errs, validateLeaseTimings(o.LeaseDuration, o.RenewDeadline, o.RetryPeriod))
	}
	errs = append(errs,
		cmdline.ValidateBindAddress("--metrics-bind-address", o.MetricsBindAddress),
		cmdline.ValidateBindAddress("--health-probe-bind-address", o.HealthProbeBindAddress))
	if o.MetricsBindAddress != "0" && o.MetricsBindAddress == o.HealthProbeBindAddress {
		errs = append(errs, fmt.Errorf("--metrics-bind-address and --health-probe-bind-address are both %q", o.MetricsBindAddress))
	}
	return errors.Join(errs...)
}

// validateLeaseTimings applies client-go's own rules (leaderelection.
// NewLeaderElector, with its jitter factor of 1.2), so that a bad
// combination fails at startup with the flag names rather than later with
// client-go's wording.
func validateLeaseTimings(lease, renew, retry time.Duration) error {
	var errs []error
	if lease <= 0 || renew <= 0 || retry <= 0 {
		errs = append(errs, errors.New("--leader-election-lease-duration, --leader-election-renew-deadline and --leader-election-retry-period must be positive"))
	}
	if lease <= renew {
		errs = append(errs, fmt.Errorf("--leader-election-lease-duration (%s) must be greater than --leader-election-renew-deadline (%s)", lease, renew))
	}
	if float64(renew) <= 1.2*float64(retry) {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be greater than 1.2 × --leader-election-retry-period (%s)", renew, retry))
	}
	return errors.Join(errs...)
}
