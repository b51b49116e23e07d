package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// eventually is generous: the tests assert outcomes, not timing.
const eventually = 30 * time.Second

type testServer struct {
	*Server
	reg      *prometheus.Registry
	webhook  string
	probe    string
	metrics  string
	done     chan error
	cancel   context.CancelFunc
	certDir  string
	ca       *certtest.Cert
	released chan struct{}
	entered  chan struct{}
}

type serverOption func(*Options, *CertWatcherOptions)

// startServer serves a webhook that answers "ok" from certificates in dir.
func startServer(t *testing.T, dir string, ca *certtest.Cert, opts ...serverOption) *testServer {
	t.Helper()
	reg := prometheus.NewRegistry()
	cm, err := NewCertMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	log := testr.New(t)
	cwo := CertWatcherOptions{
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
		// Long enough that only file events can explain a quick reload.
		PollInterval: time.Hour,
		Metrics:      cm, Log: log,
	}
	ts := &testServer{reg: reg, done: make(chan error, 1), certDir: dir, ca: ca, released: make(chan struct{}), entered: make(chan struct{}, 1)}
	o := Options{
		WebhookAddr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		Webhook: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				ts.entered <- struct{}{}
				<-ts.released
			}
			_, _ = io.WriteString(w, "ok")
		}),
		Gatherer: reg, Log: log, ShutdownTimeout: eventually,
	}
	for _, opt := range opts {
		opt(&o, &cwo)
	}
	if o.Certs, err = NewCertWatcher(cwo); err != nil {
		t.Fatal(err)
	}
	if ts.Server, err = New(o); err != nil {
		t.Fatal(err)
	}
	if err := ts.Listen(); err != nil {
		t.Fatal(err)
	}
	w, p, m := ts.Addr()
	ts.webhook, ts.probe, ts.metrics = w.String(), p.String(), m.String()
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- ts.Serve(ctx) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// startServing starts a server on the first pair, serial 1, of a new CA,
// in a directory of its own: ts.certDir and ts.ca.
func startServing(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(1)).Files())
	return startServer(t, dir, ca, opts...)
}

// stop releases the slow requests, stops the server and waits until Serve
// returned without an error.
func (ts *testServer) stop(t *testing.T) {
	select {
	case <-ts.released:
	default:
		close(ts.released)
	}
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(eventually):
		t.Error("the server did not stop")
	}
}

// servedSerial makes a TLS handshake and returns the served serial, or an
// error when the handshake fails.
func (ts *testServer) servedSerial() (int64, error) {
	conn, err := tls.Dial("tcp", ts.webhook, &tls.Config{RootCAs: ts.ca.Pool(), ServerName: "localhost"})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

func (ts *testServer) waitSerial(t *testing.T, want int64) time.Duration {
	t.Helper()
	start := time.Now()
	poll.Eventually(t, fmt.Sprintf("serial %d to be served", want), func(context.Context) error {
		switch got, err := ts.servedSerial(); {
		case err != nil:
			return err
		case got != want:
			return fmt.Errorf("serial %d served", got)
		}
		return nil
	})
	return time.Since(start)
}

func (ts *testServer) probeStatus(t *testing.T, path string) int {
	t.Helper()
	resp, err := http.Get("http://" + ts.probe + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func (ts *testServer) waitReady(t *testing.T) {
	t.Helper()
	poll.Eventually(t, "/readyz to answer 200", func(context.Context) error {
		if code := ts.probeStatus(t, "/readyz"); code != http.StatusOK {
			return fmt.Errorf("/readyz = %d: %v", code, ts.Ready())
		}
		return nil
	})
}

func (ts *testServer) metricValue(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	families, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				if c := m.GetCounter(); c != nil {
					return c.GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("metric %s%v not found", name, labels)
	return 0
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func TestServerServesAKubeletStyleRotation(t *testing.T) {
	ts := startServing(t)
	ts.waitReady(t)
	ts.waitSerial(t, 1)

	second := ts.ca.MustIssue(t, certtest.Localhost(2))
	certtest.MustWriteAtomic(t, ts.certDir, second.Files())
	took := ts.waitSerial(t, 2)
	t.Logf("the new serial was served %v after the ..data swap (file events only; the poll is an hour)", took)

	leaf, err := tls.X509KeyPair(second.CertPEM, second.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ts.metricValue(t, "snatch_webhook_serving_cert_not_after_seconds"), float64(leaf.Leaf.NotAfter.Unix()); got != want {
		t.Errorf("snatch_webhook_serving_cert_not_after_seconds = %v, want %v", got, want)
	}
	if got := ts.metricValue(t, "snatch_webhook_cert_reloads_total", "result", ReloadSuccess); got != 2 {
		t.Errorf("successful reloads = %v, want 2", got)
	}
}

func TestServerKeepsTheLastGoodPair(t *testing.T) {
	tests := []struct {
		name  string
		files func(ca *certtest.Cert) map[string][]byte
	}{
		{name: "mismatched_pair_keeps_the_last_good_one", files: func(ca *certtest.Cert) map[string][]byte {
			return map[string][]byte{"tls.crt": ca.MustIssue(t, certtest.Localhost(2)).CertPEM, "tls.key": ca.MustIssue(t, certtest.Localhost(3)).KeyPEM}
		}},
		{name: "half_written_certificate_keeps_the_last_good_pair", files: func(ca *certtest.Cert) map[string][]byte {
			p := ca.MustIssue(t, certtest.Localhost(2))
			return map[string][]byte{"tls.crt": p.CertPEM[:len(p.CertPEM)/2], "tls.key": p.KeyPEM}
		}},
		{name: "missing_key_keeps_the_last_good_pair", files: func(ca *certtest.Cert) map[string][]byte {
			return map[string][]byte{"tls.crt": ca.MustIssue(t, certtest.Localhost(2)).CertPEM}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServing(t)
			ts.waitReady(t)
			ts.waitSerial(t, 1)
			errorsBefore := ts.metricValue(t, "snatch_webhook_cert_reloads_total", "result", ReloadError)

			// Without tls.key in the new files, the tls.key link dangles,
			// as when the key leaves the Secret.
			certtest.MustWriteAtomic(t, ts.certDir, tt.files(ts.ca))
			poll.Eventually(t, "the bad pair in snatch_webhook_cert_reloads_total{result=\"error\"}", func(context.Context) error {
				return atLeast(ts.metricValue(t, "snatch_webhook_cert_reloads_total", "result", ReloadError), errorsBefore+1)
			})
			if got, err := ts.servedSerial(); err != nil || got != 1 {
				t.Fatalf("served serial %d (error %v), want the last good one, 1", got, err)
			}
			if ts.probeStatus(t, "/readyz") != http.StatusOK {
				t.Error("not ready while the last good pair is served")
			}

			// A good pair after the bad one is served.
			certtest.MustWriteAtomic(t, ts.certDir, ts.ca.MustIssue(t, certtest.Localhost(4)).Files())
			ts.waitSerial(t, 4)
		})
	}
}

func TestServerNotReadyUntilTheFilesAppear(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	ts := startServer(t, dir, ca)

	// Give the server every chance to be wrongly ready. The watcher has
	// finished its first load once it has failed a second, which a file
	// event in the watched directory starts; the webhook listener answers a
	// handshake only once it serves. Ready() then has all it consults.
	waitErrors := func(want float64) {
		t.Helper()
		poll.Eventually(t, fmt.Sprintf("%v failed loads of the missing files", want), func(context.Context) error {
			return atLeast(ts.metricValue(t, "snatch_webhook_cert_reloads_total", "result", ReloadError), want)
		})
	}
	waitErrors(1)
	if err := os.WriteFile(filepath.Join(dir, "unrelated"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitErrors(2)
	if _, err := ts.servedSerial(); err == nil {
		t.Fatal("a TLS handshake succeeded without a certificate")
	}
	if got := ts.probeStatus(t, "/readyz"); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d without certificates, want 503", got)
	}
	if got := ts.probeStatus(t, "/healthz"); got != http.StatusOK {
		t.Fatalf("/healthz = %d, want 200 (the process is alive)", got)
	}

	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(7)).Files())
	ts.waitReady(t)
	ts.waitSerial(t, 7)
}

func TestServerPicksUpADirectoryCreatedLaterByPolling(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	ca := certtest.MustCA(t, certtest.Options{})
	ts := startServer(t, dir, ca, func(_ *Options, c *CertWatcherOptions) { c.PollInterval = 100 * time.Millisecond })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(5)).Files())
	ts.waitReady(t)
	ts.waitSerial(t, 5)
	// The directory is now watched too: a rotation arrives by event or poll.
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(6)).Files())
	ts.waitSerial(t, 6)
}

func TestServerSpeaksHTTP2OnlyWhenEnabledAndRefusesTLS11(t *testing.T) {
	tests := []struct {
		name    string
		http2   bool
		client  *tls.Config
		want    string
		wantErr bool
	}{
		{name: "http2_is_off_by_default", client: &tls.Config{NextProtos: []string{"h2", "http/1.1"}}, want: "http/1.1"},
		{name: "http2_is_spoken_when_enabled", http2: true, client: &tls.Config{NextProtos: []string{"h2", "http/1.1"}}, want: "h2"},
		{name: "tls_1_1_is_refused", client: &tls.Config{MaxVersion: tls.VersionTLS11}, wantErr: true},
		{name: "tls_1_2_is_accepted", client: &tls.Config{MaxVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, want: "http/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServing(t, func(o *Options, _ *CertWatcherOptions) { o.EnableHTTP2 = tt.http2 })
			ts.waitReady(t)
			cfg := tt.client.Clone()
			cfg.RootCAs, cfg.ServerName = ts.ca.Pool(), "localhost"
			conn, err := tls.Dial("tcp", ts.webhook, cfg)
			if tt.wantErr {
				if err == nil {
					conn.Close()
					t.Fatal("handshake succeeded, want it refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.ConnectionState().NegotiatedProtocol; got != tt.want {
				t.Fatalf("negotiated %q, want %q", got, tt.want)
			}
		})
	}
}

func TestServerDrainsInFlightRequestsOnShutdown(t *testing.T) {
	ts := startServing(t)
	ts.waitReady(t)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ts.ca.Pool(), ServerName: "localhost"}}}
	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := client.Post("https://"+ts.webhook+"/slow", "application/json", strings.NewReader("{}"))
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{body: string(b), err: err}
	}()
	// Wait until the request is in the handler: the server has it open.
	select {
	case <-ts.entered:
	case <-time.After(eventually):
		t.Fatal("the request did not reach the handler")
	}

	ts.cancel()
	waitNotReady(t, ts)
	select {
	case err := <-ts.done:
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	// The truth is a window: no event marks when a Serve that wrongly does not wait would have returned.
	case <-time.After(100 * time.Millisecond):
	}
	close(ts.released)
	r := <-got
	if r.err != nil || r.body != "ok" {
		t.Fatalf("in-flight request: body %q, error %v; want it answered", r.body, r.err)
	}
	select {
	case err := <-ts.done:
		if err != nil {
			t.Fatalf("Serve() = %v after a clean drain", err)
		}
		ts.done <- nil // for the cleanup
	case <-time.After(eventually):
		t.Fatal("Serve did not return after the drain")
	}
	if _, err := ts.servedSerial(); err == nil {
		t.Fatal("the webhook still accepts connections after shutdown")
	}
}

func TestServerRetiresKeptAliveConnectionsDuringTheShutdownDelay(t *testing.T) {
	ts := startServing(t, func(o *Options, _ *CertWatcherOptions) { o.ShutdownDelay = time.Hour })
	t.Cleanup(func() { close(ts.endDelay) }) // runs before the server's cleanup
	ts.waitReady(t)

	var conns atomic.Int32
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ts.ca.Pool(), ServerName: "localhost"},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conns.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}}
	post := func() *http.Response {
		t.Helper()
		resp, err := client.Post("https://"+ts.webhook+"/mutate-pod", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("request during the shutdown delay: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("body %q, want ok", b)
		}
		return resp
	}
	if resp := post(); resp.Close {
		t.Fatal("a running server closed the connection after a response")
	}
	post()
	if got := conns.Load(); got != 1 {
		t.Fatalf("%d connections for two requests before shutdown, want 1 kept alive", got)
	}

	ts.cancel()
	waitNotReady(t, ts)
	for i := range 3 {
		if resp := post(); !resp.Close {
			t.Fatalf("response %d during the shutdown delay did not close its connection", i)
		}
	}
	// The kept-alive connection was retired by the first response; each
	// later request came on a new one, which was served and closed.
	if got := conns.Load(); got != 3 {
		t.Fatalf("%d connections in all, want 3: the kept-alive one and one for each later request", got)
	}
	select {
	case err := <-ts.done:
		t.Fatalf("Serve returned (%v) before the shutdown delay ended", err)
	default:
	}
}

func TestServerMetricsEndpointExportsTheCertificateMetrics(t *testing.T) {
	ts := startServing(t)
	ts.waitReady(t)
	resp, err := http.Get("http://" + ts.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{"snatch_webhook_serving_cert_not_after_seconds ", `snatch_webhook_cert_reloads_total{result="success"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
}

func TestNewRejectsIncompleteOptions(t *testing.T) {
	cw, err := NewCertWatcher(CertWatcherOptions{CertFile: "c", KeyFile: "k"})
	if err != nil {
		t.Fatal(err)
	}
	h := http.NotFoundHandler()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{name: "no_handler_is_rejected", opts: Options{Certs: cw, WebhookAddr: ":9443"}, want: "webhook handler"},
		{name: "no_certificates_are_rejected", opts: Options{Webhook: h, WebhookAddr: ":9443"}, want: "certificate watcher"},
		{name: "no_webhook_address_is_rejected", opts: Options{Webhook: h, Certs: cw, WebhookAddr: "0"}, want: "webhook address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New() = %v, want an error about %q", err, tt.want)
			}
		})
	}
	if _, err := NewCertWatcher(CertWatcherOptions{CertFile: "c"}); err == nil {
		t.Error("NewCertWatcher accepted a watcher without a key file")
	}
}

// waitNotReady waits until the server reports itself not ready, as it does
// once its context ends.
func waitNotReady(t *testing.T, ts *testServer) {
	t.Helper()
	poll.Eventually(t, "the server to report itself not ready", func(context.Context) error {
		if ts.Ready() == nil {
			return errors.New("Ready() = nil")
		}
		return nil
	})
}

// atLeast returns nil if a metric's value got is at least want, and
// otherwise an error saying what it is.
func atLeast(got, want float64) error {
	if got < want {
		return fmt.Errorf("the value is %v, want at least %v", got, want)
	}
	return nil
}
