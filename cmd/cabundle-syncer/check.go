package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

// checkOptions are the flags of `cabundle-syncer check`. The defaults are
// the syncer's own (defaultOptions), so that on a standard install the
// command needs no flags at all and looks at what the syncer keeps.
type checkOptions struct {
	Kubeconfig              string
	Namespace               string
	SecretNamespace         string
	SecretName              string
	CAKey                   string
	WebhookConfiguration    string
	WebhookService          string
	LeaderElectionNamespace string // empty means Namespace
	LeaderElectionID        string
	WebhookSelector         string
	MinReadyWebhooks        int
	MinCAValidity           time.Duration
	TargetNamespace         string
	PoolLabelKey            string
	WorkerPool              string
	Output                  string
	Verbose                 bool
	Timeout                 time.Duration
}

// The values of --output.
const (
	outputTable = "table"
	outputJSON  = "json"
)

func defaultCheckOptions() checkOptions {
	s := defaultOptions()
	return checkOptions{
		Namespace:            s.LeaderElectionNamespace,
		SecretNamespace:      s.Syncer.SecretNamespace,
		SecretName:           s.Syncer.SecretName,
		CAKey:                s.Syncer.CAKey,
		WebhookConfiguration: s.Syncer.WebhookConfiguration,
		WebhookService:       "snatch-webhook",
		LeaderElectionID:     s.LeaderElectionID,
		WebhookSelector:      "app.kubernetes.io/name=snatch-webhook",
		MinReadyWebhooks:     2,
		MinCAValidity:        168 * time.Hour,
		PoolLabelKey:         affinity.DefaultPoolLabelKey,
		WorkerPool:           affinity.DefaultWorkerPool,
		Output:               outputTable,
		Timeout:              30 * time.Second,
	}
}

func (o *checkOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; empty means in-cluster, then $KUBECONFIG and ~/.kube/config.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the webhook Pods, the syncer Pods and the Lease.")
	fs.StringVar(&o.SecretNamespace, "secret-namespace", o.SecretNamespace, "Namespace of the Secret that holds the CA.")
	fs.StringVar(&o.SecretName, "secret-name", o.SecretName, "Name of the Secret that holds the CA.")
	fs.StringVar(&o.CAKey, "ca-key", o.CAKey, "Key in the Secret's data that holds the CA in PEM.")
	fs.StringVar(&o.WebhookConfiguration, "webhook-configuration", o.WebhookConfiguration, "Name of the MutatingWebhookConfiguration.")
	fs.StringVar(&o.WebhookService, "webhook-service", o.WebhookService, "Name of the webhook's Service in --namespace; entries that call another Service belong to another system.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the syncer's Lease (default: --namespace).")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the syncer's Lease.")
	fs.StringVar(&o.WebhookSelector, "webhook-selector", o.WebhookSelector, "Label selector of the webhook Pods in --namespace.")
	fs.IntVar(&o.MinReadyWebhooks, "min-ready-webhooks", o.MinReadyWebhooks, "Ready webhook Pods needed to pass; fewer, but at least one, warns.")
	fs.DurationVar(&o.MinCAValidity, "min-ca-validity", o.MinCAValidity, "Validity the CA must have left to pass; less warns.")
	fs.StringVar(&o.TargetNamespace, "target-namespace", o.TargetNamespace, "Also explain whether Pods created in this namespace are sent to the webhook.")
	fs.StringVar(&o.PoolLabelKey, affinity.FlagPoolLabelKey, o.PoolLabelKey, "Node label key of the worker pools, as the webhook's --pool-label-key.")
	fs.StringVar(&o.WorkerPool, affinity.FlagWorkerPool, o.WorkerPool, "The Kyma pool, when the webhook Pods' own --worker-pool cannot be read.")
	fs.StringVar(&o.Output, "output", o.Output, "Output format: table or json.")
	fs.StringVar(&o.Output, "o", o.Output, "Shorthand for --output.")
	fs.BoolVar(&o.Verbose, "verbose", o.Verbose, "List each item's details (every Pod placement counts, every endpoint dialled) in the table; -o json always has them.")
	fs.BoolVar(&o.Verbose, "v", o.Verbose, "Shorthand for --verbose.")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Time limit for all checks together.")
}

// Validate reports every option that cannot work, all at once.
func (o checkOptions) Validate() error {
	var errs []error
	msgs := func(flagName, value string, problems []string) {
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("--%s %q: %s", flagName, value, strings.Join(problems, "; ")))
		}
	}
	msgs("namespace", o.Namespace, validation.IsDNS1123Label(o.Namespace))
	msgs("secret-namespace", o.SecretNamespace, validation.IsDNS1123Label(o.SecretNamespace))
	msgs("secret-name", o.SecretName, validation.IsDNS1123Subdomain(o.SecretName))
	msgs("ca-key", o.CAKey, validation.IsConfigMapKey(o.CAKey))
	msgs("webhook-configuration", o.WebhookConfiguration, validation.IsDNS1123Subdomain(o.WebhookConfiguration))
	msgs("webhook-service", o.WebhookService, validation.IsDNS1035Label(o.WebhookService))
	if o.LeaderElectionNamespace != "" {
		msgs("leader-election-namespace", o.LeaderElectionNamespace, validation.IsDNS1123Label(o.LeaderElectionNamespace))
	}
	msgs("leader-election-id", o.LeaderElectionID, validation.IsDNS1123Subdomain(o.LeaderElectionID))
	if o.TargetNamespace != "" {
		msgs("target-namespace", o.TargetNamespace, validation.IsDNS1123Label(o.TargetNamespace))
	}
	if sel, err := labels.Parse(o.WebhookSelector); err != nil {
		errs = append(errs, fmt.Errorf("--webhook-selector %q: %w", o.WebhookSelector, err))
	} else if sel.Empty() {
		errs = append(errs, fmt.Errorf("--webhook-selector %q: must not be empty, it would count every Pod in --namespace", o.WebhookSelector))
	}
	if o.MinReadyWebhooks < 1 {
		errs = append(errs, fmt.Errorf("--min-ready-webhooks %d: must be at least 1", o.MinReadyWebhooks))
	}
	if o.MinCAValidity < 0 {
		errs = append(errs, fmt.Errorf("--min-ca-validity %s: must not be negative", o.MinCAValidity))
	}
	if o.Output != outputTable && o.Output != outputJSON {
		errs = append(errs, fmt.Errorf("-o/--output %q: want %s or %s", o.Output, outputTable, outputJSON))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	return errors.Join(errs...)
}

// config turns validated options into the checks' configuration.
func (o checkOptions) config() (check.Config, error) {
	sel, err := labels.Parse(o.WebhookSelector)
	if err != nil {
		return check.Config{}, err
	}
	leNamespace := o.LeaderElectionNamespace
	if leNamespace == "" {
		leNamespace = o.Namespace
	}
	return check.Config{
		Namespace:               o.Namespace,
		SecretNamespace:         o.SecretNamespace,
		SecretName:              o.SecretName,
		CAKey:                   o.CAKey,
		WebhookConfiguration:    o.WebhookConfiguration,
		WebhookService:          o.WebhookService,
		LeaderElectionNamespace: leNamespace,
		LeaderElectionID:        o.LeaderElectionID,
		WebhookSelector:         sel,
		MinReadyWebhooks:        o.MinReadyWebhooks,
		MinCAValidity:           o.MinCAValidity,
		TargetNamespace:         o.TargetNamespace,
		PoolLabelKey:            o.PoolLabelKey,
		WorkerPool:              o.WorkerPool,
	}, nil
}

// checkCommand is `cabundle-syncer check`. connect and now are parameters
// so that the command is tested against a fake clientset and a fixed clock.
type checkCommand struct {
	// connect builds a client from a kubeconfig path ("" for the default
	// lookup) and makes sure the API server answers.
	connect func(ctx context.Context, kubeconfig string, timeout time.Duration) (kubernetes.Interface, error)
	now     func() time.Time
}

// subcommand registers the command with the cli.
func (c checkCommand) subcommand() subcommand {
	return subcommand{name: "check", summary: "Run the operators' health checklist once (exit 0 PASS, 1 WARN, 2 FAIL, 3 could not run)", run: c.run}
}

// run parses args, runs the checks and prints the report. Its error carries
// the exit code: the report's (0, 1, 2), or check.ExitCannotRun when the
// flags are wrong or the cluster cannot be reached. A failing check is not
// an error of the command.
func (c checkCommand) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := defaultCheckOptions()
	fs := flag.NewFlagSet(binaryName+" check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.bindFlags(fs)
	fs.Usage = func() { checkUsage(stderr, fs) }
	if err := cmdline.ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return cmdline.ExitError{Code: check.ExitCannotRun, Err: fmt.Errorf("check: %w", err)}
	}
	if err := o.Validate(); err != nil {
		return cmdline.ExitError{Code: check.ExitCannotRun, Err: fmt.Errorf("check: %w", err)}
	}
	cfg, err := o.config()
	if err != nil {
		return cmdline.ExitError{Code: check.ExitCannotRun, Err: fmt.Errorf("check: %w", err)}
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	client, err := c.connect(ctx, o.Kubeconfig, o.Timeout)
	if err != nil {
		return cmdline.ExitError{Code: check.ExitCannotRun, Err: fmt.Errorf("check: %w", err)}
	}
	report := check.Run(ctx, client, cfg, c.now())

	write := func(w io.Writer) error { return report.WriteTable(w, o.Verbose) }
	if o.Output == outputJSON {
		write = report.WriteJSON
	}
	if err := write(stdout); err != nil {
		return cmdline.ExitError{Code: check.ExitCannotRun, Err: fmt.Errorf("check: write the report: %w", err)}
	}
	if code := report.ExitCode(); code != check.ExitPass {
		return cmdline.ExitError{Code: code}
	}
	return nil
}

func checkUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: %s check [flags]

Runs the operators' health checklist once: webhook-pods, syncer-lease,
ca-secret, webhook-configuration, ca-bundle, webhook-endpoints,
served-certificate, kyma-pool, placement and, with --target-namespace,
namespace. Each check reports PASS, WARN, FAIL or SKIP with a message and,
unless it passed, a remediation; -v lists each check's details.

Exit codes: 0 every check passed (or was skipped), 1 at least one WARN and no
FAIL, 2 at least one FAIL, 3 the checks could not run (bad flags, no cluster
access).

Flags:
`, binaryName)
	fs.PrintDefaults()
}

// connectCluster builds a clientset from the kubeconfig (or the in-cluster
// configuration) and asks the API server for its version. A cluster that
// does not answer that, or does not accept the credentials, cannot be
// checked at all: that is exit code 3, not six failed checks. Every request
// is bounded by timeout.
func connectCluster(ctx context.Context, kubeconfig string, timeout time.Duration) (kubernetes.Interface, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.Timeout = timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	if err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return nil, fmt.Errorf("cannot reach the API server at %s: %w", cfg.Host, err)
	}
	return cs, nil
}
