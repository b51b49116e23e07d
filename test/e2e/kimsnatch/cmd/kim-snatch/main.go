// Command kim-snatch runs the stand-in of the old kim-snatch binary
// (package kimsnatch) in a container, as the old image ran /manager:
// `make images` packs it into bin/images/kim-snatch.tar. It takes the
// flags the old manifest passes, the certificate directory the old
// Deployment mounts, and the Pod's ServiceAccount, so that the old
// installation's RBAC applies.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
)

// webhookAddr is controller-runtime's default webhook port, which the old
// Deployment declares as webhook-server.
const webhookAddr = ":9443"

// options are the old binary's command line.
type options struct {
	healthAddr        string
	workerPool        string
	webhookConfigName string
	certDir           string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("kim-snatch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.StringVar(&o.workerPool, "kyma-worker-pool-name", kimsnatch.DefaultWorkerPool, "the Kyma worker pool of the term")
	fs.StringVar(&o.webhookConfigName, "webhook-cfg-name", kimsnatch.DefaultWebhookConfigName, "the MutatingWebhookConfiguration whose caBundle is written")
	// The old Deployment mounts the Secret at /tmp.
	fs.StringVar(&o.certDir, "cert-dir", "/tmp", "the folder of tls.crt, tls.key and ca.crt")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.healthAddr == "" || o.healthAddr == "0":
		return o, errors.New("--health-probe-bind-address is required: the Deployment's probes call it")
	case o.workerPool == "" || o.webhookConfigName == "" || o.certDir == "":
		return o, errors.New("--kyma-worker-pool-name, --webhook-cfg-name and --cert-dir must not be empty")
	}
	return o, nil
}

func main() {
	cmdline.Main("kim-snatch", func(ctx context.Context) error { return run(ctx, os.Args[1:]) })
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	k, err := kimsnatch.Start(ctx, kimsnatch.Options{
		Client: client, CertDir: o.certDir, Addr: webhookAddr,
		WebhookConfigName: o.webhookConfigName, WorkerPool: o.workerPool,
	})
	if err != nil {
		return err
	}
	defer k.Stop()
	// The old binary served TLS only once it had written the caBundle after
	// its start, and a restarted binary was not running at all: readiness
	// follows the same.
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !k.Serving() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
		}
	})
	health := &http.Server{Addr: o.healthAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- health.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return health.Close()
	}
}
