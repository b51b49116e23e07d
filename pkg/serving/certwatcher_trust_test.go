package serving

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// serviceName is the name the API server calls in these tests.
const serviceName = "snatch-webhook.kyma-system.svc"

// trustWatcher is a CertWatcher on a directory, with its clock, metrics and
// log at hand.
type trustWatcher struct {
	*CertWatcher
	dir     string
	ca      *certtest.Cert
	clock   *clocktesting.FakePassiveClock
	metrics *CertMetrics
	logs    *observer.ObservedLogs
}

// startTrustWatcher starts a watcher for dnsName on an empty directory;
// the files are the test's to write.
func startTrustWatcher(t *testing.T, now time.Time, poll time.Duration, dnsName string) *trustWatcher {
	t.Helper()
	tw := &trustWatcher{dir: t.TempDir(), ca: certtest.MustCA(t, certtest.Options{CommonName: "ca"}), clock: clocktesting.NewFakePassiveClock(now)}
	var err error
	if tw.metrics, err = NewCertMetrics(prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	tw.logs = logs
	tw.CertWatcher, err = NewCertWatcher(CertWatcherOptions{
		CertFile: filepath.Join(tw.dir, certtest.CertFile), KeyFile: filepath.Join(tw.dir, certtest.KeyFile),
		DNSName: dnsName, PollInterval: poll, Metrics: tw.metrics, Log: zapr.NewLogger(zap.New(core)), Clock: tw.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tw.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return tw
}

// write issues a certificate for o from the watcher's CA and writes the
// pair as kubelet does.
func (tw *trustWatcher) write(t *testing.T, o certtest.Options) {
	t.Helper()
	certtest.MustWriteAtomic(t, tw.dir, tw.ca.MustIssue(t, o).Files())
}

// servedSerial is the serial of the certificate served, or 0 for none.
func (tw *trustWatcher) servedSerial() int64 {
	c, err := tw.GetCertificate(nil)
	if err != nil {
		return 0
	}
	return c.Leaf.SerialNumber.Int64()
}

// waitFailure waits until a load failed for reason, counted and logged,
// and returns its line.
func (tw *trustWatcher) waitFailure(t *testing.T, reason string) observer.LoggedEntry {
	t.Helper()
	var found observer.LoggedEntry
	poll.Eventually(t, fmt.Sprintf("a load failed for %s, counted and logged", reason), func(context.Context) error {
		if testutil.ToFloat64(tw.metrics.failures.WithLabelValues(reason)) == 0 {
			return fmt.Errorf("none counted; logged: %v", tw.logs.All())
		}
		for _, line := range tw.logs.FilterMessage(MsgCertificateLoadFailed).All() {
			if line.ContextMap()[logkeys.Reason] == reason {
				found = line
				return nil
			}
		}
		return fmt.Errorf("counted, not logged; logged: %v", tw.logs.All())
	})
	return found
}

// waitServed waits until the certificate with serial is served.
func (tw *trustWatcher) waitServed(t *testing.T, serial int64) {
	t.Helper()
	poll.Eventually(t, fmt.Sprintf("serial %d to be served", serial), func(context.Context) error {
		if got := tw.servedSerial(); got != serial {
			return fmt.Errorf("serving %d; logged: %v", got, tw.logs.All())
		}
		return nil
	})
}

// A renewed certificate that the API server would refuse, by the watcher's
// clock or for the Service's name, does not replace the one served; a
// metric and a line say why, and the next good one is served.
func TestCertWatcherKeepsTheLastGoodPairOverACertificateTheAPIServerWouldRefuse(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	valid := func(serial int64) certtest.Options {
		return certtest.Options{DNSNames: []string{serviceName}, Serial: serial, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
	}
	tests := []struct {
		name   string
		reason string
		// bad returns the refused certificate; it may move the clock.
		bad func(*trustWatcher) certtest.Options
	}{
		{name: "expired_certificate_is_refused", reason: ReasonExpired, bad: func(*trustWatcher) certtest.Options {
			return certtest.Options{DNSNames: []string{serviceName}, Serial: 2, NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Minute)}
		}},
		{name: "expired_by_the_watchers_clock_is_refused", reason: ReasonExpired, bad: func(tw *trustWatcher) certtest.Options {
			tw.clock.SetTime(now.Add(2 * time.Hour))
			return certtest.Options{DNSNames: []string{serviceName}, Serial: 2, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
		}},
		{name: "not_yet_valid_certificate_is_refused", reason: ReasonNotYetValid, bad: func(*trustWatcher) certtest.Options {
			return certtest.Options{DNSNames: []string{serviceName}, Serial: 2, NotBefore: now.Add(time.Hour), NotAfter: now.Add(48 * time.Hour)}
		}},
		{name: "certificate_for_another_service_is_refused", reason: ReasonWrongName, bad: func(*trustWatcher) certtest.Options {
			return certtest.Options{DNSNames: []string{"snatch-webhook.other.svc"}, Serial: 2, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
		}},
		{name: "certificate_for_no_name_is_refused", reason: ReasonWrongName, bad: func(*trustWatcher) certtest.Options {
			return certtest.Options{CommonName: serviceName, Serial: 2, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tw := startTrustWatcher(t, now, time.Hour, serviceName)
			tw.write(t, valid(1))
			tw.waitServed(t, 1)

			tw.write(t, tt.bad(tw))
			line := tw.waitFailure(t, tt.reason)
			if got := tw.servedSerial(); got != 1 {
				t.Fatalf("serving serial %d after the refused certificate, want the last good one, 1", got)
			}
			if line.Level != zapcore.ErrorLevel || line.ContextMap()[logkeys.KeptPrevious] != true || line.ContextMap()[logkeys.Serial] != "2" {
				t.Errorf("line at level %s with %v, want error level, %s=true and the refused serial 2", line.Level, line.ContextMap(), logkeys.KeptPrevious)
			}
			if got := testutil.ToFloat64(tw.metrics.reloads.WithLabelValues(ReloadError)); got < 1 {
				t.Errorf("snatch_webhook_cert_reloads_total{result=\"error\"} = %v, want the refusal counted", got)
			}

			tw.write(t, valid(3))
			tw.waitServed(t, 3)
		})
	}
}

// At start there is no last good pair: a certificate the API server would
// refuse is not served, and the replica is not ready, until a good one
// loads.
func TestServerServesNoCertificateAtStartThatTheAPIServerWouldRefuse(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	expired := certtest.Localhost(1)
	expired.NotBefore, expired.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, expired).Files())
	ts := startServer(t, dir, ca, func(_ *Options, c *CertWatcherOptions) { c.DNSName = "localhost" })

	poll.Eventually(t, "the expired certificate in snatch_webhook_cert_reload_failures_total{reason=\"expired\"}",
		func(context.Context) error {
			return atLeast(ts.metricValue(t, "snatch_webhook_cert_reload_failures_total", "reason", ReasonExpired), 1)
		})
	if serial, err := ts.servedSerial(); err == nil {
		t.Fatalf("a TLS handshake succeeded with serial %d; want none while only an expired certificate exists", serial)
	}
	if got := ts.probeStatus(t, "/readyz"); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d with only an expired certificate, want 503", got)
	}
	if got := ts.metricValue(t, "snatch_webhook_serving_cert_not_after_seconds"); got != 0 {
		t.Errorf("snatch_webhook_serving_cert_not_after_seconds = %v, want 0 while nothing is served", got)
	}

	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(2)).Files())
	ts.waitReady(t)
	ts.waitSerial(t, 2)
}

// A certificate issued ahead of the watcher's clock is not served at start,
// and is served by a later poll once the clock has reached its notBefore,
// without a change of the files.
func TestCertWatcherServesACertificateOnceItBecomesValid(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	tw := startTrustWatcher(t, now, 10*time.Millisecond, serviceName)
	tw.write(t, certtest.Options{DNSNames: []string{serviceName}, Serial: 5, NotBefore: now.Add(5 * time.Second), NotAfter: now.Add(48 * time.Hour)})
	line := tw.waitFailure(t, ReasonNotYetValid)
	if tw.Loaded() || line.ContextMap()[logkeys.KeptPrevious] != false {
		t.Fatalf("Loaded() = %v, line %v; want nothing served and %s=false", tw.Loaded(), line.ContextMap(), logkeys.KeptPrevious)
	}
	tw.clock.SetTime(now.Add(5 * time.Second))
	tw.waitServed(t, 5)
}

// Without a name to check, any name is served: the flag is off.
func TestCertWatcherWithoutDNSNameSkipsTheNameCheck(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	tw := startTrustWatcher(t, now, time.Hour, "")
	tw.write(t, certtest.Options{DNSNames: []string{"anything.example"}, Serial: 6, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)})
	tw.waitServed(t, 6)
}
