// Command generic-webhook is the baseline of the webhook benchmark: the
// same decision served the way generic admission libraries serve it, as
// kim-snatch's old implementation did. controller-runtime's
// admission.Webhook decodes the whole AdmissionReview, the handler decodes
// the whole Pod into k8s types, adds the term to the typed Pod, encodes it
// again and diffs the two documents into a JSON patch: the handler is
// admissiontest.Generic, the baseline of package admission's benchmark
// too.
//
// Everything else is the snatch-webhook's: the TLS server, certificate
// watcher, probes and metrics of pkg/serving, and its logger, which writes
// one unsampled production JSON line per decision, so that a comparison of
// the two measures the decoding and patching and nothing else.
package main

import (
	"context"
	"flag"
	"net"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	snatchadmission "github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/admission/admissiontest"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
	"github.com/kyma-project/kim-snatch/test/bench/internal/command"
)

var (
	flags       = flag.NewFlagSet("generic-webhook", flag.ContinueOnError)
	certDir     = flags.String("cert-dir", "", "Directory of tls.crt and tls.key.")
	port        = flags.Int("webhook-port", 9443, "TLS port of /mutate-pod.")
	metricsAddr = flags.String("metrics-bind-address", "0", `Address of /metrics; "0" disables it.`)
	probeAddr   = flags.String("health-probe-bind-address", "0", `Address of /healthz and /readyz; "0" disables it.`)
)

func main() { command.Main(flags, run) }

func run(ctx context.Context) error {
	log := cmdline.NewLogger(crzap.Options{}, snatchadmission.LoggerName)

	mutator, err := affinity.NewMutator(affinity.DefaultPolicy())
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	certs, err := serving.NewCertWatcher(serving.CertWatcherOptions{
		CertFile: filepath.Join(*certDir, "tls.crt"),
		KeyFile:  filepath.Join(*certDir, "tls.key"),
		Log:      log.WithName("certificates"),
	})
	if err != nil {
		return err
	}
	handler := admissiontest.Generic(mutator, log.WithName(snatchadmission.LoggerName))
	mux := http.NewServeMux()
	mux.Handle(webhookpath.MutatePod, handler)
	srv, err := serving.New(serving.Options{
		WebhookAddr: net.JoinHostPort("", strconv.Itoa(*port)),
		ProbeAddr:   *probeAddr,
		MetricsAddr: *metricsAddr,
		Webhook:     mux,
		Certs:       certs,
		Gatherer:    reg,
		Log:         log.WithName("serving"),
	})
	if err != nil {
		return err
	}
	return srv.Serve(ctx)
}
