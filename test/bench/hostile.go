package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/hostile"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// hostileSection measures the legitimate load of the webhook section (one
// payload, 8 connections) with and without hostile clients beside it: RSS,
// p99 and the reviews that failed.
func (r *runner) hostileSection(ctx context.Context) error {
	bin, err := process.Build(ctx, "snatch-webhook", r.dir)
	if err != nil {
		return err
	}
	certDir := filepath.Join(r.dir, "hostile-certs")
	roots, _, err := writeServingCert(certDir)
	if err != nil {
		return err
	}
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	body, err := os.ReadFile(filepath.Join(root, "pkg", "admission", "testdata", payloads[0].file))
	if err != nil {
		return err
	}
	goMemLimit, err := shippedGoMemLimit(root)
	if err != nil {
		return err
	}
	res := &HostileResults{Payload: payloads[0].name, Concurrency: 8, ClaimConns: hostile.ClaimConns, SlowConns: hostile.SlowConns, IdleConns: hostile.IdleConns, GoMemLimit: goMemLimit}
	for _, attacked := range []bool{false, true} {
		s, err := r.startHostileTarget(ctx, bin, certDir, goMemLimit)
		if err != nil {
			return err
		}
		stats, err := r.hostileCell(ctx, roots, s, body, res.Concurrency, attacked)
		if err != nil {
			return err
		}
		if attacked {
			res.Hostile = stats
		} else {
			res.Quiet = stats
		}
		r.progress("hostile=%-5v %8.0f reviews/s  p99 %6.3f ms  errors %d  rss %.1f MiB", attacked, stats.ReviewsPerSecond, stats.P99Ms, stats.Errors, stats.RSSMiB)
	}
	res.RSSMiB = figure(res.Hostile.RSSMiB, res.Quiet.RSSMiB)
	res.P99Ms = figure(res.Hostile.P99Ms, res.Quiet.P99Ms)
	r.res.Hostile = res
	return nil
}

// shippedGoMemLimit is the GOMEMLIMIT environment entry of
// deploy/webhook/deployment.yaml, under which the hostile section runs the
// webhook as shipped; test/manifests holds the manifest to the memory limit.
func shippedGoMemLimit(root string) (string, error) {
	path := filepath.Join(root, "deploy", "webhook", "deployment.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "GOMEMLIMIT" {
				return e.Name + "=" + e.Value, nil
			}
		}
	}
	return "", fmt.Errorf("%s: no container sets GOMEMLIMIT", path)
}

// startHostileTarget starts snatch-webhook as shipped, unpinned: the hostile
// clients compete with it as another Pod would.
func (r *runner) startHostileTarget(ctx context.Context, bin, certDir, goMemLimit string) (*server, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	ports := strconv.Itoa(port)
	p, metrics, err := r.startReadyEnv(ctx, "snatch-webhook-hostile", bin, -1, []string{goMemLimit},
		"--cert-dir="+certDir, "--webhook-port="+ports, noShutdownDelay)
	if err != nil {
		return nil, err
	}
	return &server{proc: p, url: "https://127.0.0.1:" + ports + "/mutate-pod", metrics: metrics}, nil
}

// hostileCell runs the legitimate load, with the hostile clients beside it
// when attacked is set. Answers other than a patch count as errors: past the
// budget they are the 503s that fail open.
func (r *runner) hostileCell(ctx context.Context, roots *x509.CertPool, s *server, body []byte, conc int, attacked bool) (LoadStats, error) {
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if attacked {
		u, err := url.Parse(s.url)
		if err != nil {
			stop()
			return LoadStats{}, err
		}
		h := hostile.Clients{Addr: u.Host, TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
		h.Start(hctx, &wg)
		time.Sleep(time.Second) // let the hostile connections pile up before measuring
	}
	client := newTLSClient(roots, conc)
	stats, err := load{client: client, url: s.url, body: body, conc: conc,
		duration: max(r.cfg.CellDuration, 3*time.Second), maxReviews: r.cfg.CellMaxReviews, server: s.proc}.run(ctx)
	client.CloseIdleConnections()
	stop()
	wg.Wait()
	if err == nil && s.proc.Exited() {
		err = fmt.Errorf("the webhook exited: %v; log:\n%s", s.proc.WaitErr(), s.proc.LogTail(20))
	}
	return stats, err
}
