// Command snatch-webhook serves the mutating admission webhook that gives Pods
// in Kyma-managed namespaces a preferred node affinity for the Kyma worker
// pool. "snatch-webhook mutate -f pod.yaml" runs the same decision on a file,
// without a cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/serving"
)

const binaryName = "snatch-webhook"

func main() {
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, runWebhook: run}
	cmdline.Main(binaryName, func(ctx context.Context) error { return c.execute(ctx, os.Args[1:]) })
}

// cli parses the command line (the webhook is the root command, `mutate` a
// subcommand) for a run function, so that parsing is tested without serving.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	runWebhook     func(context.Context, Options) error
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	mutate := cmdline.Subcommand{Name: "mutate",
		Summary: "Show the decision, its reason and the mutated Pod for a Pod manifest, without a cluster.",
		Run:     func(_ context.Context, args []string) error { return c.mutate(args) }}
	return cmdline.NewRoot(binaryName, about, defaultOptions, c.runWebhook, mutate).Execute(ctx, args, c.stdout, c.stderr)
}

const about = `Serves the mutating admission webhook that adds a preferred node affinity
for the Kyma worker pool to Pods. Pods opt out with the label
` + affinity.OptOutLabel + `: "` + affinity.OptOutValue + `".`

// Options are the webhook's flags (see BindFlags), parsed and not yet acted on.
type Options struct {
	Policy                                     affinity.Policy
	CertDir, CertName, KeyName                 string
	CertDNSName                                string
	WebhookPort                                int
	MetricsBindAddress, HealthProbeBindAddress string
	EnableHTTP2                                bool
	ShutdownDelay                              time.Duration
	RequestTimeout                             time.Duration
	InFlightBodyBytes                          int64
	MaxConnections                             int
	Zap                                        zap.Options

	// webhookHost restricts the webhook listener to one address (127.0.0.1 in
	// tests); no flag sets it.
	webhookHost string
}

// maxRequestTimeout is the API server's largest timeoutSeconds (30 s) plus
// serving.RequestTimeoutMargin.
const maxRequestTimeout = 30*time.Second + serving.RequestTimeoutMargin

// maxShutdownDelay leaves room for the drain in a 30 s termination grace period.
const maxShutdownDelay = 10 * time.Second

func defaultOptions() Options {
	return Options{
		Policy: affinity.DefaultPolicy(),
		// controller-runtime's, so that the binary drops into setups made for its
		// webhooks.
		CertDir:                "/tmp/k8s-webhook-server/serving-certs",
		CertName:               "tls.crt",
		KeyName:                "tls.key",
		WebhookPort:            9443,
		MetricsBindAddress:     ":8080",
		HealthProbeBindAddress: ":8081",
		ShutdownDelay:          serving.DefaultShutdownDelay,
		RequestTimeout:         serving.DefaultRequestTimeout,
		InFlightBodyBytes:      admission.DefaultInFlightBodyBytes,
		MaxConnections:         serving.DefaultMaxConnections,
	}
}

// BindFlags registers every flag on fs, with the values o holds as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Policy.BindFlags(fs)
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "Directory of the serving certificate and key, watched for changes.")
	fs.StringVar(&o.CertName, "cert-name", o.CertName, "File name of the serving certificate in --cert-dir.")
	fs.StringVar(&o.KeyName, "key-name", o.KeyName, "File name of the serving key in --cert-dir.")
	fs.StringVar(&o.CertDNSName, "cert-dns-name", o.CertDNSName,
		"The name the API server calls, <service>.<namespace>.svc: "+
			"a certificate not valid for it is not served, nor one expired or not yet valid, "+
			"and the last good one stays. Empty skips the name check.")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort,
		"TLS port of the webhook (paths /mutate-pod and /mutate--v1-pod).")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		`Address of /metrics; "0" disables it.`)
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		`Address of /healthz and /readyz; "0" disables it.`)
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", o.EnableHTTP2,
		"Offer HTTP/2 on the webhook port. Off by default: HTTP/1.1 is all the API server needs.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay", o.ShutdownDelay,
		"On SIGTERM, keep serving this long with readiness failed and each connection closed after its response, "+
			"so that the API server moves to other replicas without a failed call; then drain.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout,
		"Longest time to read a webhook request and write its answer; "+
			"at least the MutatingWebhookConfiguration's timeoutSeconds.")
	fs.Int64Var(&o.InFlightBodyBytes, "max-in-flight-body-bytes", o.InFlightBodyBytes,
		"Bound on the request bodies held at once over all connections; "+
			"past it a request gets a 503 and fails open. "+
			"It must hold the largest body, "+strconv.Itoa(admission.DefaultMaxBodyBytes)+" bytes, and fit under GOMEMLIMIT.")
	fs.IntVar(&o.MaxConnections, "max-connections", o.MaxConnections,
		"Bound on the webhook port's open connections; "+
			"past it new connections wait. Each costs memory until --request-timeout closes it.")
	fs.Bool("version", false, "Print the version and exit.") // cmdline.Root acts on it
	o.Zap.BindFlags(fs)
}

// Validate reports every invalid flag at once, by its flag name.
func (o Options) Validate() error {
	errs := []error{o.Policy.Validate()}
	if o.CertDir == "" {
		errs = append(errs, errors.New("--cert-dir must not be empty"))
	}
	for _, f := range [][2]string{{"--cert-name", o.CertName}, {"--key-name", o.KeyName}} {
		if v := f[1]; v == "" || filepath.IsAbs(v) || strings.HasPrefix(filepath.Clean(v), "..") {
			errs = append(errs, fmt.Errorf("%s must be a file name inside --cert-dir, got %q", f[0], v))
		}
	}
	if msgs := validation.IsDNS1123Subdomain(o.CertDNSName); o.CertDNSName != "" && len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--cert-dns-name %q is not a DNS name: %s", o.CertDNSName, strings.Join(msgs, "; ")))
	}
	if o.ShutdownDelay < 0 || o.ShutdownDelay > maxShutdownDelay {
		errs = append(errs, fmt.Errorf("--shutdown-delay must be between 0 and %s, got %s", maxShutdownDelay,
			o.ShutdownDelay))
	}
	if o.RequestTimeout < time.Second || o.RequestTimeout > maxRequestTimeout {
		errs = append(errs, fmt.Errorf("--request-timeout must be between 1s and %s, got %s", maxRequestTimeout,
			o.RequestTimeout))
	}
	if o.InFlightBodyBytes <= admission.DefaultMaxBodyBytes {
		errs = append(errs, fmt.Errorf("--max-in-flight-body-bytes must be more than the largest body, %d, got %d",
			admission.DefaultMaxBodyBytes, o.InFlightBodyBytes))
	}
	if o.MaxConnections < 1 {
		errs = append(errs, fmt.Errorf("--max-connections must be at least 1, got %d", o.MaxConnections))
	}
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port must be between 1 and 65535, got %d", o.WebhookPort))
	}
	errs = append(errs, cmdline.ValidateBindAddress("--metrics-bind-address", o.MetricsBindAddress),
		cmdline.ValidateBindAddress("--health-probe-bind-address", o.HealthProbeBindAddress))
	return errors.Join(errs...)
}
