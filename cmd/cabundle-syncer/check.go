package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/validate"
)

// checkOptions are the flags of `cabundle-syncer check`.
type checkOptions struct {
	check.Config
	WebhookSelectorText string // parsed into Config.WebhookSelector
	Cluster             clusterFlags
	Output              string
	Verbose             bool
	Timeout             time.Duration
	FailOn              check.FailOn
}

// bindFlags registers the flags with the syncer's defaults, so that on a
// standard install check needs no flags and looks at what the syncer keeps.
func (o *checkOptions) bindFlags(fs *flag.FlagSet) {
	s := defaultOptions()
	o.Cluster.bind(fs)
	fs.StringVar(&o.Namespace, "namespace", s.LeaderElectionNamespace,
		"Namespace of the webhook Pods, the syncer Pods and the Lease.")
	fs.StringVar(&o.SecretNamespace, "secret-namespace", s.Syncer.SecretNamespace,
		"Namespace of the Secret that holds the CA.")
	fs.StringVar(&o.SecretName, "secret-name", s.Syncer.SecretName, "Name of the Secret that holds the CA.")
	fs.StringVar(&o.CAKey, "ca-key", s.Syncer.CAKey, "Key in the Secret's data that holds the CA in PEM.")
	fs.StringVar(&o.WebhookConfiguration, "webhook-configuration", s.Syncer.WebhookConfiguration,
		"Name of the MutatingWebhookConfiguration.")
	fs.StringVar(&o.WebhookService, "webhook-service", "snatch-webhook",
		"Name of the webhook's Service in --namespace; entries that call another Service belong to another system.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the syncer's Lease (default: --namespace).")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", s.LeaderElectionID, "Name of the syncer's Lease.")
	fs.StringVar(&o.WebhookSelectorText, "webhook-selector", "app.kubernetes.io/name=snatch-webhook",
		"Label selector of the webhook Pods in --namespace.")
	fs.IntVar(&o.MinReadyWebhooks, "min-ready-webhooks", 2,
		"Ready webhook Pods needed to pass; fewer, but at least one, warns.")
	fs.DurationVar(&o.MinCAValidity, "min-ca-validity", 168*time.Hour,
		"Validity the CA must have left to pass; less warns.")
	fs.StringVar(&o.TargetNamespace, "target-namespace", "",
		"Also explain whether Pods created in this namespace are sent to the webhook.")
	fs.StringVar(&o.PoolLabelKey, affinity.FlagPoolLabelKey, affinity.DefaultPoolLabelKey,
		"Node label key of the worker pools, as the webhook's --pool-label-key.")
	fs.StringVar(&o.WorkerPool, affinity.FlagWorkerPool, affinity.DefaultWorkerPool,
		"The Kyma pool, when the webhook Pods' own --worker-pool cannot be read.")
	fs.StringVar(&o.AdmissionNamespace, "admission-namespace", check.DefaultAdmissionNamespace,
		"Kyma-managed namespace of the admission item's dry-run Pod (deploy/syncer/check.yaml ships it).")
	o.bindOutputFlags(fs)
}

// bindOutputFlags registers the flags of what check prints and when it fails.
func (o *checkOptions) bindOutputFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Output, "output", "table", "Output format: table or json.")
	fs.StringVar(&o.Output, "o", "table", "Shorthand for --output.")
	fs.BoolVar(&o.Verbose, "verbose", false,
		"List each item's details (every Pod placement counts, every endpoint dialled) in the table; "+
			"-o json always has them.")
	fs.BoolVar(&o.Verbose, "v", false, "Shorthand for --verbose.")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second, "Time limit for all checks together.")
	fs.TextVar(&o.FailOn, "fail-on", check.FailOnWarn,
		"Lowest report status that exits non-zero: warn, or fail to exit 0 for a WARN (the in-cluster CronJob's); "+
			"FAIL, INCOMPLETE and errors exit non-zero at either.")
}

// config returns the Config and an error naming each option that cannot work.
func (o checkOptions) config() (check.Config, error) {
	var errs validate.Errors
	errs.Field("--namespace", o.Namespace, validation.IsDNS1123Label)
	syncer.Config{SecretNamespace: o.SecretNamespace, SecretName: o.SecretName, CAKey: o.CAKey,
		WebhookConfiguration: o.WebhookConfiguration}.
		ValidateNames(&errs, syncer.FieldNames{SecretNamespace: "--secret-namespace", SecretName: "--secret-name",
			CAKey: "--ca-key", WebhookConfiguration: "--webhook-configuration"})
	errs.Field("--webhook-service", o.WebhookService, validation.IsDNS1035Label)
	if o.LeaderElectionNamespace != "" {
		errs.Field("--leader-election-namespace", o.LeaderElectionNamespace, validation.IsDNS1123Label)
	}
	errs.Field("--leader-election-id", o.LeaderElectionID, validation.IsDNS1123Subdomain)
	if o.TargetNamespace != "" {
		errs.Field("--target-namespace", o.TargetNamespace, validation.IsDNS1123Label)
	}
	errs.Field("--admission-namespace", o.AdmissionNamespace, validation.IsDNS1123Label)
	sel, err := labels.Parse(o.WebhookSelectorText)
	if err != nil {
		errs.Addf("--webhook-selector %q: %w", o.WebhookSelectorText, err)
	} else if sel.Empty() {
		errs.Addf("--webhook-selector %q: must not be empty, it would count every Pod in --namespace", o.WebhookSelectorText)
	}
	if o.MinReadyWebhooks < 1 {
		errs.Addf("--min-ready-webhooks %d: must be at least 1", o.MinReadyWebhooks)
	}
	if o.MinCAValidity < 0 {
		errs.Addf("--min-ca-validity %s: must not be negative", o.MinCAValidity)
	}
	if o.Output != "table" && o.Output != "json" {
		errs.Addf("-o/--output %q: want table or json", o.Output)
	}
	if o.Timeout <= 0 {
		errs.Addf("--timeout %s: must be positive", o.Timeout)
	}
	cfg := o.Config
	cfg.WebhookSelector, cfg.LeaderElectionNamespace = sel, cmp.Or(cfg.LeaderElectionNamespace, cfg.Namespace)
	return cfg, errs.Err()
}

// checkCommand is `cabundle-syncer check`: connectCluster, time.Now and
// inCluster outside tests.
type checkCommand struct {
	connect   func(context.Context, clusterFlags, time.Duration) (kubernetes.Interface, check.Cluster, error)
	now       func() time.Time
	inCluster func() bool
}

// run parses args, runs the checks and prints the report. Its error carries
// the report's exit code under --fail-on, check.ExitUsage when the flags
// are wrong, or check.ExitCannotRun when the cluster cannot be reached: a
// failing check is no error of the command.
func (c checkCommand) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	exit := func(code int) func(error) error {
		return func(err error) error { return cmdline.ExitError{Code: code, Err: fmt.Errorf("check: %w", err)} }
	}
	usage, cannotRun := exit(check.ExitUsage), exit(check.ExitCannotRun)
	o, cfg, err := parseCheckFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return usage(err)
	}
	cfg.InCluster = !o.Cluster.explicit() && c.inCluster()

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	client, cluster, err := c.connect(ctx, o.Cluster, o.Timeout)
	if err != nil {
		return cannotRun(err)
	}
	report := check.Run(ctx, client, cfg, c.now())
	report.Cluster = cluster
	if o.Output == "json" {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteTable(stdout, o.Verbose)
	}
	if err != nil {
		return cannotRun(fmt.Errorf("write the report: %w", err))
	}
	if code := report.ExitCodeAt(o.FailOn); code != check.ExitPass {
		return cmdline.ExitError{Code: code}
	}
	return nil
}

// parseCheckFlags parses check's flags, and returns them and the Config
// they give, flag.ErrHelp for -h, or an error naming every flag that is
// wrong.
func parseCheckFlags(args []string, stderr io.Writer) (checkOptions, check.Config, error) {
	var o checkOptions
	fs := flag.NewFlagSet(binaryName+" check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.bindFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, checkUsage, binaryName, check.ExitCodesHelp())
		fs.PrintDefaults()
	}
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return o, check.Config{}, err
	}
	cfg, err := o.config()
	return o, cfg, err
}

const checkUsage = `Usage: %s check [flags]

Runs the operators' health checklist once: webhook-pods, syncer-lease,
ca-secret, webhook-configuration, ca-bundle, webhook-endpoints,
served-certificate, admission (a dry-run Pod create), kyma-pool, placement
and, with --target-namespace, namespace. Each check reports PASS, WARN, FAIL or SKIP with a message and,
unless it passed, a remediation; -v lists each check's details.

Exit codes (docs/operations.md, "Exit codes"):
%s
With --fail-on=fail, a WARN exits 0; the report still says WARN.

Flags:
`

// connectCluster builds a clientset for the cluster the flags select, each
// request bounded by timeout, and asks for the version: no answer or
// refused credentials exit 3, not six FAILs.
func connectCluster(ctx context.Context, flags clusterFlags, timeout time.Duration) (
	kubernetes.Interface, check.Cluster, error) {
	cfg, cluster, err := flags.load()
	if err != nil {
		return nil, cluster, fmt.Errorf("load kubeconfig: %w", err)
	}
	withRateLimit(cfg).Timeout = timeout
	// Protobuf, as the controllers ask for built-in types: a page of Pods is
	// smaller than its JSON and decodes with less garbage. check reads
	// built-in types only.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, cluster, fmt.Errorf("create client: %w", err)
	}
	if err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return nil, cluster, fmt.Errorf("cannot reach the API server %s of context %s: %w", cfg.Host, cluster.Context, err)
	}
	return cs, cluster, nil
}

// inCluster reports whether check runs in a Pod, with the in-cluster
// configuration that restConfig prefers.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}
