// Command cabundle-syncer keeps webhooks[*].clientConfig.caBundle of the
// kim-snatch MutatingWebhookConfiguration in step with the CA in the
// certificate Secret. See package syncer for how, and docs/ for operations.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	checkpkg "github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/validate"
)

const binaryName = "cabundle-syncer"

func main() {
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, runSyncer: run,
		runCheck: checkCommand{connect: connectCluster, now: time.Now, inCluster: inCluster}.run}
	cmdline.Main(binaryName, func(ctx context.Context) error { return c.execute(ctx, os.Args[1:]) })
}

// cli parses the command line, the syncer's or check's, for a run function,
// so that parsing and validation are tested without starting anything.
type cli struct {
	stdout, stderr io.Writer
	runSyncer      func(context.Context, Options) error
	runCheck       func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	check := cmdline.Subcommand{Name: "check",
		Summary: "Run the operators' health checklist once (exit " + checkpkg.ExitCodesSummary() + ")",
		Run:     func(ctx context.Context, args []string) error { return c.runCheck(ctx, args, c.stdout, c.stderr) }}
	return cmdline.NewRoot(binaryName, about, defaultOptions, c.runSyncer, check).Execute(ctx, args, c.stdout, c.stderr)
}

const about = "Keeps webhooks[*].clientConfig.caBundle of a MutatingWebhookConfiguration " +
	"in step with the CA in a Secret."

// Options are the syncer's flags (see BindFlags), parsed and not yet acted on.
type Options struct {
	Syncer syncer.Config

	LeaderElect                                bool
	LeaderElectionNamespace, LeaderElectionID  string
	LeaseDuration, RenewDeadline, RetryPeriod  time.Duration
	MetricsBindAddress, HealthProbeBindAddress string
	MetricsSecure                              bool
	Kubeconfig                                 string
	Zap                                        zap.Options
	Version                                    bool
}

func defaultOptions() Options {
	return Options{
		Syncer: syncer.Config{SecretNamespace: syncer.DefaultNamespace, SecretName: syncer.DefaultSecretName,
			CAKey: syncer.DefaultCAKey, WebhookConfiguration: syncer.DefaultWebhookConfiguration, Overlap: time.Hour,
			ReleaseFieldManagers: []string{syncer.DefaultReleaseFieldManager}},
		LeaderElect: true, LeaderElectionNamespace: syncer.DefaultNamespace, LeaderElectionID: syncer.DefaultLeaseName,
		// client-go's recommended values, as kube-controller-manager uses.
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		MetricsBindAddress: ":8080", HealthProbeBindAddress: ":8081", MetricsSecure: true,
	}
}

// BindFlags registers every flag on fs, writing into o. The defaults shown
// in --help are the values o holds when called.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Syncer.SecretNamespace, "secret-namespace", o.Syncer.SecretNamespace,
		"Namespace of the Secret that holds the CA.")
	fs.StringVar(&o.Syncer.SecretName, "secret-name", o.Syncer.SecretName, "Name of the Secret that holds the CA.")
	fs.StringVar(&o.Syncer.CAKey, "ca-key", o.Syncer.CAKey, "Key in the Secret's data that holds the CA in PEM.")
	fs.StringVar(&o.Syncer.WebhookConfiguration, "webhook-configuration", o.Syncer.WebhookConfiguration,
		"Name of the MutatingWebhookConfiguration whose caBundle is kept.")
	fs.DurationVar(&o.Syncer.Overlap, "ca-overlap", o.Syncer.Overlap,
		"How long a CA stays in the caBundle after it left the Secret; 0 replaces the bundle at every rotation.")
	fs.Var(commaList{&o.Syncer.ReleaseFieldManagers}, "release-field-managers",
		"Field managers, `NAME[,NAME...]`, whose server-side apply entries the syncer removes from the "+
			"MutatingWebhookConfiguration's managedFields at every sync, so that they own no webhook entry: writers "+
			"that no longer write it, such as the single-binary kim-snatch (snatch). Empty releases none.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader through a Lease; only the leader writes.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"Namespace of the leader election Lease.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration,
		"How long standbys wait after the last renewal before they take the Lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline,
		"How long the leader keeps trying to renew before it gives up leading and exits.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod,
		"How often candidates try to acquire or renew the Lease.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		"Address of the /metrics endpoint; 0 disables it.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure,
		"Serve /metrics over HTTPS with a self-signed certificate, "+
			"only to clients whose bearer token may get /metrics (TokenReview and SubjectAccessReview); "+
			"false serves plain HTTP to anyone.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"Address of the /healthz and /readyz endpoints; 0 disables them.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"Path to a kubeconfig; empty means in-cluster, then $KUBECONFIG and ~/.kube/config.")
	fs.BoolVar(&o.Version, "version", o.Version, "Print the version and exit.")
	o.Zap.BindFlags(fs)
}

// Validate reports every option that cannot work, all at once.
func (o Options) Validate() error {
	var errs validate.Errors
	errs.Add(o.Syncer.Validate())
	if o.LeaderElect {
		errs.Field("--leader-election-namespace", o.LeaderElectionNamespace, validation.IsDNS1123Label)
		errs.Field("--leader-election-id", o.LeaderElectionID, validation.IsDNS1123Subdomain)
		// client-go's rules (leaderelection.NewLeaderElector, jitter factor 1.2),
		// so that a bad combination fails at startup, naming the flags.
		lease, renew, retry := o.LeaseDuration, o.RenewDeadline, o.RetryPeriod
		if lease <= 0 || renew <= 0 || retry <= 0 {
			errs.Addf("--leader-election-lease-duration, --leader-election-renew-deadline and " +
				"--leader-election-retry-period must be positive")
		}
		if lease <= renew {
			errs.Addf("--leader-election-lease-duration (%s) must be greater than "+
				"--leader-election-renew-deadline (%s)", lease, renew)
		}
		if float64(renew) <= 1.2*float64(retry) {
			errs.Addf("--leader-election-renew-deadline (%s) must be greater than "+
				"1.2 × --leader-election-retry-period (%s)", renew, retry)
		}
	}
	errs.Add(cmdline.ValidateBindAddress("--metrics-bind-address", o.MetricsBindAddress))
	errs.Add(cmdline.ValidateBindAddress("--health-probe-bind-address", o.HealthProbeBindAddress))
	if o.MetricsBindAddress != "0" && o.MetricsBindAddress == o.HealthProbeBindAddress {
		errs.Addf("--metrics-bind-address and --health-probe-bind-address are both %q", o.MetricsBindAddress)
	}
	return errs.Err()
}
