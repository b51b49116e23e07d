package bench

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// payloads are the reviews of pkg/admission/testdata, the same as the
// handler benchmarks use.
var payloads = []struct{ name, file string }{
	{"pod_5k5", "review-pod-5k5.json"},
	{"pod_8k8_managed_fields", "review-pod-8k8-managed-fields.json"},
}

// genericBaseline names the reference server in the results.
const genericBaseline = "generic-webhook (test/bench/cmd/generic-webhook): controller-runtime admission.Webhook, whole review and Pod decoded into k8s types, patch by diff; same TLS server and logging"

// server is a webhook process and where it listens.
type server struct {
	proc    *process.Process
	url     string
	metrics string
}

// webhookSection measures the snatch-webhook binary over TLS keep-alive,
// pinned to one core with the load generator on another, against a
// reference server that decodes the whole review and Pod and diffs the
// patch (cmd/generic-webhook), for every payload and concurrency.
func (r *runner) webhookSection(ctx context.Context) error {
	// On a machine with one core nothing is pinned.
	serverCPU, loadCPU := 0, 1
	if runtime.NumCPU() < 2 {
		serverCPU, loadCPU = -1, -1
	}
	snatch, generic, roots, err := r.startWebhooks(ctx, serverCPU)
	if err != nil {
		return err
	}
	r.progress("servers on CPUs %s (snatch) and %s (generic)", allowedCPUs(snatch.proc.PID()), allowedCPUs(generic.proc.PID()))
	if loadCPU >= 0 {
		old, err := pinSelf(cpuSet(loadCPU))
		if err != nil {
			return fmt.Errorf("pin the load generator: %w", err)
		}
		prev := runtime.GOMAXPROCS(1)
		defer func() {
			_, _ = pinSelf(&old)
			runtime.GOMAXPROCS(prev)
		}()
	}
	res := &WebhookResults{Baseline: genericBaseline, ServerCPU: serverCPU, LoadCPU: loadCPU}
	if res.Cells, err = r.webhookCells(ctx, roots, snatch, generic); err != nil {
		return err
	}
	// The webhook's own count of patched reviews: warm-ups included, so at
	// least the measured ones.
	n, err := process.Metric(http.DefaultClient, snatch.metrics, "snatch_webhook_admission_total", `{outcome="patched",reason="injected"}`)
	if err != nil {
		return fmt.Errorf("scrape the webhook: %w", err)
	}
	res.Reviews = map[string]int{"snatch_webhook_admission_total_patched": int(n)}
	r.res.Webhook = res
	return nil
}

// startWebhooks builds and starts snatch-webhook and the generic baseline
// on cpu, with one serving certificate, and returns the pool that trusts
// it.
func (r *runner) startWebhooks(ctx context.Context, cpu int) (snatch, generic *server, roots *x509.CertPool, err error) {
	snatchBin, err := process.Build(ctx, "snatch-webhook", r.dir)
	if err != nil {
		return nil, nil, nil, err
	}
	genericBin, err := buildCommand(ctx, r.dir, "generic-webhook")
	if err != nil {
		return nil, nil, nil, err
	}
	certDir := filepath.Join(r.dir, "webhook-certs")
	if roots, _, err = writeServingCert(certDir); err != nil {
		return nil, nil, nil, err
	}
	if snatch, err = r.startWebhook(ctx, "snatch-webhook", snatchBin, certDir, cpu, noShutdownDelay); err != nil {
		return nil, nil, nil, err
	}
	if generic, err = r.startWebhook(ctx, "generic-webhook", genericBin, certDir, cpu); err != nil {
		return nil, nil, nil, err
	}
	return snatch, generic, roots, nil
}

// webhookCells loads both servers with every payload at every concurrency.
func (r *runner) webhookCells(ctx context.Context, roots *x509.CertPool, snatch, generic *server) ([]WebhookCell, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	var cells []WebhookCell
	for _, p := range payloads {
		body, err := os.ReadFile(filepath.Join(root, "pkg", "admission", "testdata", p.file))
		if err != nil {
			return nil, err
		}
		for _, conc := range r.cfg.Concurrency {
			// Alternate which server goes first, so that drift between
			// the two halves of a cell favours neither.
			order := []*server{snatch, generic}
			if len(cells)%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			c := WebhookCell{Payload: p.name, PayloadBytes: len(body), Concurrency: conc}
			stats := map[*server]*LoadStats{snatch: &c.Snatch, generic: &c.Generic}
			for _, s := range order {
				if *stats[s], err = r.loadCell(ctx, roots, s, p.name, body, conc); err != nil {
					return nil, err
				}
			}
			cells = append(cells, c.withFigures())
		}
	}
	return cells, nil
}

// loadCell loads one server with one payload at one concurrency.
func (r *runner) loadCell(ctx context.Context, roots *x509.CertPool, s *server, payload string, body []byte, conc int) (LoadStats, error) {
	client := newTLSClient(roots, conc)
	stats, err := load{
		client: client, url: s.url, body: body, conc: conc,
		duration: r.cfg.CellDuration, maxReviews: r.cfg.CellMaxReviews, server: s.proc,
	}.run(ctx)
	client.CloseIdleConnections()
	if err != nil {
		return stats, fmt.Errorf("%s, %s, concurrency %d: %w", s.proc.Name, payload, conc, err)
	}
	r.progress("%-15s %-22s c=%-3d %8.0f reviews/s  p99 %6.3f ms  cpu %.4f ms/review  rss %.1f MiB  load cpu %.2f",
		s.proc.Name, payload, conc, stats.ReviewsPerSecond, stats.P99Ms, stats.CPUMsPerReview, stats.RSSMiB, stats.LoadCPUShare)
	return stats, nil
}

// withFigures sets the cell's figures from its two servers' stats.
func (c WebhookCell) withFigures() WebhookCell {
	c.ReviewsPerSecond = figure(c.Snatch.ReviewsPerSecond, c.Generic.ReviewsPerSecond)
	c.P50Ms = figure(c.Snatch.P50Ms, c.Generic.P50Ms)
	c.P99Ms = figure(c.Snatch.P99Ms, c.Generic.P99Ms)
	c.P999Ms = figure(c.Snatch.P999Ms, c.Generic.P999Ms)
	c.CPUMsPerReview = figure(c.Snatch.CPUMsPerReview, c.Generic.CPUMsPerReview)
	c.CPUSecondsPer10k = figure(c.Snatch.CPUSecondsPer10k, c.Generic.CPUSecondsPer10k)
	c.RSSMiB = figure(c.Snatch.RSSMiB, c.Generic.RSSMiB)
	return c
}

// buildCommand builds the baseline ./test/bench/cmd/<name> of the main
// module into dir.
func buildCommand(ctx context.Context, dir, name string) (string, error) {
	return process.Build(ctx, "test/bench/cmd/"+name, dir)
}

// writeServingCert writes a serving certificate for 127.0.0.1 into dir as
// kubelet writes a Secret volume, and returns the pool that trusts it and
// its CA in PEM.
func writeServingCert(dir string) (*x509.CertPool, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	ca, err := certtest.NewCA(certtest.Options{})
	if err != nil {
		return nil, nil, err
	}
	leaf, err := ca.Issue(certtest.Localhost(24))
	if err != nil {
		return nil, nil, err
	}
	if err := certtest.WriteAtomic(dir, leaf.Files()); err != nil {
		return nil, nil, err
	}
	return ca.Pool(), ca.CertPEM, nil
}

// noShutdownDelay stops snatch-webhook at once: nothing calls it while the
// benchmark stops it.
const noShutdownDelay = "--shutdown-delay=0"

// startWebhook starts a webhook binary on free loopback ports, pinned to
// cpu unless it is negative, and waits until it is ready. extra are added
// to the common flags.
func (r *runner) startWebhook(ctx context.Context, name, bin, certDir string, cpu int, extra ...string) (*server, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--cert-dir=" + certDir, "--webhook-port=" + strconv.Itoa(port)}, extra...)
	p, metrics, err := r.startReady(ctx, name, bin, cpu, args...)
	if err != nil {
		return nil, err
	}
	return &server{proc: p, url: "https://127.0.0.1:" + strconv.Itoa(port) + "/mutate-pod", metrics: metrics}, nil
}

// startReady starts bin as name with args, and its metrics and probes on
// free loopback ports, pinned to cpu unless it is negative, until the
// section ends. It returns once /readyz answers 200, with the URL of
// /metrics.
func (r *runner) startReady(ctx context.Context, name, bin string, cpu int, args ...string) (*process.Process, string, error) {
	return r.startReadyEnv(ctx, name, bin, cpu, nil, args...)
}

// startReadyEnv is startReady with env added to the process's environment.
func (r *runner) startReadyEnv(ctx context.Context, name, bin string, cpu int, env []string, args ...string) (*process.Process, string, error) {
	ports, err := framework.FreePorts(2)
	if err != nil {
		return nil, "", err
	}
	metrics, probe := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	opts := process.Options{Name: name, Path: bin, LogPath: filepath.Join(r.dir, name+".log"),
		Env: env, Args: append(args, "--metrics-bind-address="+metrics, "--health-probe-bind-address="+probe)}
	var p *process.Process
	if cpu >= 0 {
		p, err = startPinned(cpu, opts)
	} else {
		p, err = process.Start(opts)
	}
	if err != nil {
		return nil, "", err
	}
	r.stops = append(r.stops, func() { p.Stop(10 * time.Second) })
	if err := waitReady(ctx, p, "http://"+probe+"/readyz", 30*time.Second); err != nil {
		return nil, "", err
	}
	return p, "http://" + metrics + "/metrics", nil
}

// waitReady polls url until it answers 200, the process exits or timeout
// passes.
func waitReady(ctx context.Context, p *process.Process, url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	err := poll.Until(ctx, p.Name+" to be ready at "+url, func(context.Context) error {
		if p.Exited() {
			return poll.Stop(fmt.Errorf("%s exited: %v; log:\n%s", p.Name, p.WaitErr(), p.LogTail(20)))
		}
		return process.Ready(client, url)
	}, poll.Timeout(timeout))
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%w; log:\n%s", err, p.LogTail(20))
	}
	return err
}
