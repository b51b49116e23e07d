package syncer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The integration tests of this package share one control plane, started on
// first use and stopped after the last test. Every test works in its own
// namespace with its own MutatingWebhookConfiguration.
var shared struct {
	once    sync.Once
	cluster *framework.Cluster
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			code = 1
		}
	}
	os.Exit(code)
}

// cluster returns the shared control plane. Integration tests are skipped
// with -short.
func cluster(t *testing.T) *framework.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the control plane from `make tools`")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.cluster, shared.err = framework.Start(ctx, framework.Options{})
	})
	if shared.err != nil {
		t.Fatalf("start control plane: %v", shared.err)
	}
	return shared.cluster
}

// harness is one syncer, running in this process against the shared
// control plane, for one namespace and one MutatingWebhookConfiguration.
type harness struct {
	t       *testing.T
	cluster *framework.Cluster
	cfg     Config
	reg     *prometheus.Registry
	metrics *Metrics
	done    chan error
}

// newHarness creates a namespace and a MutatingWebhookConfiguration with
// the named webhook entries, and configures, but does not start, a syncer.
func newHarness(t *testing.T, overlap time.Duration, webhooks ...string) *harness {
	t.Helper()
	h := newEmptyHarness(t, overlap)
	if _, err := syncertest.CreateWebhookConfiguration(context.Background(), h.cluster.Clientset, syncertest.WebhookConfiguration(h.cfg.WebhookConfiguration, webhooks...)); err != nil {
		t.Fatal(err)
	}
	return h
}

// newEmptyHarness is newHarness without the MutatingWebhookConfiguration,
// for a test that creates it as a deployer does. The object is deleted when
// the test ends either way.
func newEmptyHarness(t *testing.T, overlap time.Duration) *harness {
	t.Helper()
	c := cluster(t)
	id := uniqueName(t)
	h := &harness{
		t:       t,
		cluster: c,
		cfg: Config{
			SecretNamespace:      id,
			SecretName:           "kim-snatch-certificates",
			CAKey:                "ca.crt",
			WebhookConfiguration: id,
			Overlap:              overlap,
		},
	}
	ctx := context.Background()
	if err := syncertest.CreateNamespace(ctx, c.Clientset, id); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), id, metav1.DeleteOptions{})
	})
	return h
}

// start runs the syncer until the test ends, with its own metrics registry.
func (h *harness) start() {
	t := h.t
	t.Helper()
	h.reg = prometheus.NewRegistry()
	var err error
	if h.metrics, err = NewMetrics(h.reg); err != nil {
		t.Fatal(err)
	}
	logs := &testLog{t: t}
	mgr, err := manager.New(h.cluster.Config, manager.Options{
		Logger:                 zap.New(zap.WriteTo(logs), zap.UseDevMode(true), zap.StacktraceLevel(zapcore.DPanicLevel)),
		Cache:                  CacheOptions(h.cfg),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Several tests each run a controller of the same name in this one
		// process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := SetupWithManager(ctx, mgr, h.cfg, h.metrics); err != nil {
		cancel()
		t.Fatal(err)
	}
	h.done = make(chan error, 1)
	go func() { h.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-h.done; err != nil {
			t.Errorf("syncer stopped with an error: %v", err)
		}
		logs.close()
	})
}

// running fails the test if the syncer has stopped.
func (h *harness) running() {
	h.t.Helper()
	select {
	case err := <-h.done:
		h.done <- err
		h.t.Fatalf("the syncer stopped: %v", err)
	default:
	}
}

func (h *harness) mwc(ctx context.Context) *admissionregistrationv1.MutatingWebhookConfiguration {
	h.t.Helper()
	mwc, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, h.cfg.WebhookConfiguration, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return mwc
}

// waitMWC waits until observe accepts the MutatingWebhookConfiguration.
func (h *harness) waitMWC(ctx context.Context, what string, observe func(*admissionregistrationv1.MutatingWebhookConfiguration) bool) (*admissionregistrationv1.MutatingWebhookConfiguration, time.Time) {
	h.t.Helper()
	mwc, at, err := syncertest.WatchWebhookConfiguration(ctx, h.cluster.Clientset, h.cfg.WebhookConfiguration, 30*time.Second, observe)
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
	return mwc, at
}

// metric returns the value of a gauge or counter, optionally the series
// with the given reason label.
func (h *harness) metric(name string, reason ...string) float64 {
	h.t.Helper()
	families, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if len(reason) > 0 && !hasLabel(m.GetLabel(), "reason", reason[0]) {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	h.t.Fatalf("metric %s%v not found", name, reason)
	return 0
}

// waitMetric waits until a metric has the value want.
func (h *harness) waitMetric(ctx context.Context, name string, want float64, reason ...string) {
	h.t.Helper()
	// A short fixed pause, not the doubling one: a gauge may hold want
	// only for a moment between two syncs.
	err := poll.Until(ctx, fmt.Sprintf("%s%v = %v", name, reason, want), func(context.Context) error {
		if got := h.metric(name, reason...); got != want {
			return fmt.Errorf("%s%v = %v", name, reason, got)
		}
		return nil
	}, poll.Interval(10*time.Millisecond))
	if err != nil {
		h.t.Fatal(err)
	}
}

func hasLabel(labels []*dto.LabelPair, name, value string) bool {
	for _, l := range labels {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

func uniqueName(t *testing.T) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	name := strings.ToLower(t.Name())
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, name)
	if len(name) > 40 {
		name = name[:40]
	}
	return strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}

// testLog sends the syncer's log to the test's log until the test ends;
// goroutines that log after that (event broadcasting) are dropped instead
// of panicking the test binary.
type testLog struct {
	mu     sync.Mutex
	t      *testing.T
	closed bool
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (l *testLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}
