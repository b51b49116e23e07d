// Command generic-webhook is the baseline of the webhook benchmark: the
// same decision served the way generic admission libraries serve it, as
// kim-snatch's old implementation did. controller-runtime's
// admission.Webhook decodes the whole AdmissionReview, the handler decodes
// the whole Pod into k8s types, adds the term to the typed Pod, encodes it
// again and diffs the two documents into a JSON patch.
//
// Everything else is the snatch-webhook's: the TLS server, certificate
// watcher, probes and metrics of pkg/serving, and its logger, which writes
// one unsampled production JSON line per decision, so that a comparison of
// the two measures the decoding and patching and nothing else.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	snatchadmission "github.com/kyma-project/kim-snatch/pkg/admission"
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
	handler := genericWebhook(mutator, log.WithName(snatchadmission.LoggerName))
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

// genericWebhook decides with the same Mutator as the snatch-webhook, on a
// fully decoded Pod, and returns the diff of the mutated Pod as the patch.
func genericWebhook(m *affinity.Mutator, log logr.Logger) http.Handler {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err) // the client-go scheme always registers
	}
	decoder := admission.NewDecoder(scheme)
	term := m.Policy().Term()
	return &admission.Webhook{
		LogConstructor: func(logr.Logger, *admission.Request) logr.Logger { return logr.Discard() },
		Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
			pod := &corev1.Pod{}
			if err := decoder.Decode(req, pod); err != nil {
				return admission.Errored(http.StatusBadRequest, err)
			}
			d := m.Decide(m.Policy().FactsOf(pod))
			outcome := "allowed"
			if d.Patched() {
				outcome = "patched"
			}
			log.Info("admission decision", "namespace", req.Namespace, "pod", pod.Name, "uid", string(req.UID),
				"outcome", outcome, "reason", string(d.Reason), "detail", d.Message)
			if !d.Patched() {
				return admission.Allowed(string(d.Reason))
			}
			addTerm(pod, term)
			marshaled, err := json.Marshal(pod)
			if err != nil {
				return admission.Errored(http.StatusInternalServerError, err)
			}
			return admission.PatchResponseFromRaw(req.Object.Raw, marshaled)
		}),
	}
}

func addTerm(pod *corev1.Pod, term corev1.PreferredSchedulingTerm) {
	if pod.Spec.Affinity == nil {
		pod.Spec.Affinity = &corev1.Affinity{}
	}
	if pod.Spec.Affinity.NodeAffinity == nil {
		pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := pod.Spec.Affinity.NodeAffinity
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, term)
}
