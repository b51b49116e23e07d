package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// The tests in this file run the built binary as real processes against a
// real control plane: leader election, signals, memory and RBAC are
// properties of the process, not of the reconciler.

const (
	namespace   = "kyma-system"
	secretName  = "kim-snatch-certificates"
	mwcName     = "kim-snatch-mutating-webhook-configuration"
	leaseName   = "cabundle-syncer"
	testVersion = process.TestVersion
)

// Short lease timings, so that a failover takes seconds. They keep
// client-go's proportions: lease > renew > 1.2 × retry.
var leaseFlags = []string{
	"--leader-election-lease-duration=4s",
	"--leader-election-renew-deadline=3s",
	"--leader-election-retry-period=500ms",
}

var webhookNames = []string{"pods.kim-snatch.kyma-project.io", "pods-legacy.kim-snatch.kyma-project.io"}

func TestMain(m *testing.M) {
	code := m.Run()
	process.RemoveBuilt()
	os.Exit(code)
}

// binary builds cmd/cabundle-syncer as its image does, stamped with
// process.TestVersion. Process tests are skipped with -short.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process test: builds the binary and needs the control plane from `make tools`")
	}
	return process.Binary(t, "cabundle-syncer")
}

// syncerProcess is one running cabundle-syncer.
type syncerProcess struct {
	*process.Process
	t       *testing.T
	metrics string
	health  string
}

// startSyncer starts the binary with args plus its own metrics and probe
// ports. Metrics are plain HTTP, so that waitMetric can scrape them, unless
// args pass --metrics-secure=true (the last value of a flag wins). The
// kernel kills it if the test binary dies; the test's cleanup stops it and,
// on failure, shows its log.
func startSyncer(t *testing.T, name string, args ...string) *syncerProcess {
	t.Helper()
	return startSyncerEnv(t, name, nil, args...)
}

// startSyncerEnv is startSyncer with env ("KEY=value") added to the test's
// own environment.
func startSyncerEnv(t *testing.T, name string, env []string, args ...string) *syncerProcess {
	t.Helper()
	p := &syncerProcess{
		t:       t,
		metrics: "127.0.0.1:" + strconv.Itoa(freePort(t)),
		health:  "127.0.0.1:" + strconv.Itoa(freePort(t)),
	}
	args = append(append([]string{"--metrics-secure=false"}, args...), "--metrics-bind-address="+p.metrics, "--health-probe-bind-address="+p.health)
	var err error
	p.Process, err = process.Start(process.Options{
		Name: name, Path: binary(t), Args: args, Env: env,
		LogPath: filepath.Join(t.TempDir(), name+".log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(15 * time.Second)
		if t.Failed() {
			t.Logf("log of %s:\n%s", p.Name, p.LogTail(60))
		}
	})
	return p
}

func (p *syncerProcess) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// waitExit waits for the process to end and returns its exit code.
func (p *syncerProcess) waitExit(timeout time.Duration) int {
	p.t.Helper()
	code, err := p.Wait(timeout)
	if err != nil {
		p.t.Fatal(err)
	}
	return code
}

// metric scrapes /metrics and returns the value of an unlabelled series.
func (p *syncerProcess) metric(name string) (float64, error) {
	return process.Metric(http.DefaultClient, "http://"+p.metrics+"/metrics", name, "")
}

// metricPoll is how often waitMetric scrapes.
const metricPoll = 20 * time.Millisecond

// waitMetric polls /metrics until name has the value want, and returns
// when it saw it; the poll interval bounds how late that time may be.
func (p *syncerProcess) waitMetric(name string, want float64, timeout time.Duration) time.Time {
	p.t.Helper()
	var seen time.Time
	poll.Eventually(p.t, fmt.Sprintf("%s = %v on %s", name, want, p.Name), func(context.Context) error {
		got, err := p.metric(name)
		seen = time.Now()
		switch {
		case err != nil:
			return err
		case got != want:
			return fmt.Errorf("%s = %v", name, got)
		}
		return nil
	}, poll.Timeout(timeout), poll.Interval(metricPoll))
	return seen
}

// ready returns nil if /readyz answers 200, and otherwise what it answered.
func (p *syncerProcess) ready() error {
	return process.Ready(http.DefaultClient, "http://"+p.health+"/readyz")
}

func (p *syncerProcess) waitReady(timeout time.Duration) {
	p.t.Helper()
	poll.Eventually(p.t, p.Name+" to be ready", func(context.Context) error { return p.ready() }, poll.Timeout(timeout))
}

// rssBytes reads the resident set size of the process.
func (p *syncerProcess) rssBytes() int64 {
	p.t.Helper()
	n, err := p.RSS()
	if err != nil {
		p.t.Fatal(err)
	}
	return n
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setupObjects creates the namespace, the MutatingWebhookConfiguration as
// the webhook's manifests would, and the certificate Secret with ca.
func setupObjects(t *testing.T, cs kubernetes.Interface, ca *certtest.Cert) {
	t.Helper()
	ctx := context.Background()
	if err := syncertest.CreateNamespace(ctx, cs, namespace); err != nil {
		t.Fatal(err)
	}
	if _, err := syncertest.CreateWebhookConfiguration(ctx, cs, syncertest.WebhookConfiguration(mwcName, webhookNames...)); err != nil {
		t.Fatal(err)
	}
	putCA(t, cs, ca)
}

// putCA writes ca into the certificate Secret, creating it if needed.
func putCA(t *testing.T, cs kubernetes.Interface, ca *certtest.Cert) {
	t.Helper()
	ctx := context.Background()
	secret := syncertest.CertSecret(namespace, secretName, "ca.crt", ca.CertPEM)
	if _, err := cs.CoreV1().Secrets(namespace).Update(ctx, secret, metav1.UpdateOptions{}); err == nil {
		return
	}
	if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitBundle waits until every webhook entry holds exactly fps.
func waitBundle(t *testing.T, cs kubernetes.Interface, fps ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	mwc, _, err := syncertest.WatchWebhookConfiguration(context.Background(), cs, mwcName, 30*time.Second, func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, fps...)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mwc
}

func newCluster(t *testing.T) *framework.Cluster {
	t.Helper()
	binary(t) // skip early with -short, and build before the clock starts
	return framework.New(t, framework.Options{})
}

func TestBinaryPrintsItsStampedVersion(t *testing.T) {
	out := process.Run(t, binary(t), "--version")
	want := fmt.Sprintf("cabundle-syncer %s (", testVersion)
	if !strings.HasPrefix(out, want) {
		t.Errorf("--version printed %q, want it to start with %q", out, want)
	}
}
