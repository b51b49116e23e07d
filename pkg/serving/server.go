package serving

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"
)

// Defaults of Options.ShutdownTimeout and ShutdownDelay (snatch-webhook's
// --shutdown-delay): together they fit in Kubernetes' default termination grace
// period of 30 s.
const (
	DefaultShutdownTimeout = 20 * time.Second
	DefaultShutdownDelay   = 5 * time.Second
)

// RequestTimeoutMargin is what a webhook request's timeout adds to the
// webhook's timeoutSeconds, for the TLS handshake and clock skew.
const RequestTimeoutMargin = time.Second

// DefaultRequestTimeout bounds the reading of a webhook request, headers and
// body, and the writing of its answer (Options.RequestTimeout, snatch-webhook's
// --request-timeout). The API server gives up on a call after the webhook's
// timeoutSeconds (at most 30 s; the shipped MutatingWebhookConfiguration has
// 2 s), so a connection held past it serves no one but a slow client. It is the
// shipped timeoutSeconds plus RequestTimeoutMargin; test/manifests
// (TestWebhookTimeoutsMatchTheAPIServers) holds the two together. An operator
// who raises timeoutSeconds raises the flag with it.
const DefaultRequestTimeout = 2*time.Second + RequestTimeoutMargin

// DefaultMaxConnections bounds the webhook listener's open connections
// (Options.MaxConnections, snatch-webhook's --max-connections). Each costs the
// webhook memory until its request timeout closes it, however little its
// client sends; docs/benchmarks.md ("[hostile]") measures what, and bounded
// so, the connections fit beside the bodies in flight under the shipped
// memory limit. Past it, new connections wait in the kernel's backlog and the
// API server fails open for a call that waits too long. The API server keeps
// a few connections to each replica, far fewer than this.
const DefaultMaxConnections = 512

// Keys of the lines only people read; those of the contract are in pkg/logkeys.
const (
	keyWebhook, keyProbes, keyMetrics, keyHTTP2 = "webhook", "probes", "metrics", "http2"
	keyDelay, keyTimeout, keyDir, keyEvent      = "delay", "timeout", "dir", "event"
)

// Options configure a Server.
type Options struct {
	// WebhookAddr is the TLS listener; ProbeAddr and MetricsAddr are plain HTTP,
	// "0" disables them.
	WebhookAddr, ProbeAddr, MetricsAddr string
	// EnableHTTP2 offers h2 on the webhook listener; off, the webhook is out
	// of reach of HTTP/2 stream attacks (CVE-2023-44487, CVE-2023-39325).
	EnableHTTP2 bool

	Webhook         http.Handler        // serves the admission paths
	Certs           *CertWatcher        // provides the serving certificate
	Gatherer        prometheus.Gatherer // exposed on /metrics
	Log             logr.Logger
	ShutdownTimeout time.Duration // bounds the drain; DefaultShutdownTimeout when not positive
	// ShutdownDelay is the first phase of a shutdown: readiness fails and the
	// webhook serves on, each response closing its connection, so that no
	// kept-alive connection is closed under a request the API server would not
	// retry. Zero or negative skips the phase.
	ShutdownDelay time.Duration
	// RequestTimeout is the webhook listener's ReadHeaderTimeout, ReadTimeout
	// and WriteTimeout; DefaultRequestTimeout when not positive. The probe and
	// metrics listeners keep newHTTPServer's.
	RequestTimeout time.Duration
	// MaxConnections bounds the webhook listener's open connections, with
	// golang.org/x/net/netutil; DefaultMaxConnections when not positive.
	MaxConnections int
}

// Server runs the webhook's TLS listener, its probes, its metrics and the
// certificate watcher.
type Server struct {
	opts                    Options
	webhook, probe, metrics *http.Server
	listeners               [3]net.Listener // webhook, probe, metrics; nil when disabled
	serving                 atomic.Bool     // the webhook listener has started
	stopping                atomic.Bool     // shutdown has begun
	endDelay                chan struct{}   // closing it ends the shutdown delay early; for tests
}

// New checks the options and builds the servers; it binds nothing.
func New(o Options) (*Server, error) {
	switch {
	case o.Webhook == nil:
		return nil, errors.New("serving: a webhook handler is required")
	case o.Certs == nil:
		return nil, errors.New("serving: a certificate watcher is required")
	case o.WebhookAddr == "" || o.WebhookAddr == "0":
		return nil, errors.New("serving: the webhook address is required")
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	o.Gatherer = cmp.Or[prometheus.Gatherer](o.Gatherer, prometheus.NewRegistry())
	s := &Server{opts: o, endDelay: make(chan struct{})}

	// Once shutdown has begun, every response closes its connection.
	s.webhook = newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		o.Webhook.ServeHTTP(w, r)
	}), o.Log.WithName("webhook-http"))
	s.webhook.ReadHeaderTimeout, s.webhook.ReadTimeout, s.webhook.WriteTimeout = o.RequestTimeout, o.RequestTimeout, o.RequestTimeout
	s.webhook.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: o.Certs.GetCertificate}
	s.webhook.Protocols = new(http.Protocols)
	s.webhook.Protocols.SetHTTP1(true)
	s.webhook.Protocols.SetHTTP2(o.EnableHTTP2)

	probes := http.NewServeMux()
	// Answers are plain text, not to be sniffed, as http.Error writes them.
	probes.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "ok", http.StatusOK) })
	probes.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		http.Error(w, "ok", http.StatusOK)
	})
	s.probe = newHTTPServer(probes, o.Log.WithName("probe-http"))

	metrics := http.NewServeMux()
	metrics.Handle("/metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{ErrorLog: log.New(errorLog{o.Log.WithName("metrics")}, "", 0)}))
	s.metrics = newHTTPServer(metrics, o.Log.WithName("metrics-http"))
	return s, nil
}

// newHTTPServer sets the limits of every listener: slow clients are cut off
// before they hold many connections. The webhook listener's timeouts are
// Options.RequestTimeout instead.
func newHTTPServer(h http.Handler, l logr.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(errorLog{l}, "", 0),
	}
}

// errorLog logs net/http's own messages, mostly TLS handshake errors, at
// verbosity 1: not errors of the webhook, but clues to a caBundle problem.
type errorLog struct{ logr.Logger }

func (l errorLog) Write(p []byte) (int, error) {
	l.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Ready returns nil when the webhook can serve: a certificate loaded, the
// listener up, no shutdown.
func (s *Server) Ready() error {
	switch {
	case s.stopping.Load():
		return errors.New("shutting down")
	case !s.opts.Certs.Loaded():
		return errors.New("no serving certificate has loaded")
	case !s.serving.Load():
		return errors.New("the webhook listener is not accepting yet")
	}
	return nil
}

// Listen binds the listeners: a bad address fails at start, and tests learn the
// ports (Addr) before Serve.
func (s *Server) Listen() (err error) {
	for i, addr := range []string{s.opts.WebhookAddr, s.opts.ProbeAddr, s.opts.MetricsAddr} {
		if addr == "" || addr == "0" {
			continue
		}
		if s.listeners[i], err = net.Listen("tcp", addr); err != nil {
			for _, l := range s.listeners[:i] {
				if l != nil {
					_ = l.Close() // the error that failed the start is returned
				}
			}
			s.listeners = [3]net.Listener{}
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
	}
	s.listeners[0] = netutil.LimitListener(s.listeners[0], s.opts.MaxConnections)
	return nil
}

// Addr returns the bound addresses (nil when disabled); call it after Listen.
func (s *Server) Addr() (webhook, probe, metrics net.Addr) {
	var addrs [3]net.Addr
	for i, l := range s.listeners {
		if l != nil {
			addrs[i] = l.Addr()
		}
	}
	return addrs[0], addrs[1], addrs[2]
}

// Serve runs until ctx ends, then fails readiness, serves on for ShutdownDelay
// closing each connection after its response, and drains in-flight requests for
// up to ShutdownTimeout. It calls Listen if needed.
func (s *Server) Serve(ctx context.Context) error {
	if s.listeners[0] == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	errs := s.start(watchCtx, &wg)
	runErr := s.waitForStop(ctx, errs)
	drainErr := s.drain(ctx)
	stopWatch()
	wg.Wait()
	close(errs)
	return errors.Join(cmp.Or(runErr, <-errs), drainErr) // <-errs: the first failure while draining, or nil
}

// start runs the certificate watcher and each bound listener in wg; failures
// come on the channel returned.
func (s *Server) start(watchCtx context.Context, wg *sync.WaitGroup) chan error {
	errs := make(chan error, 4) // one for each goroutine
	run := func(name string, f func() error) {
		wg.Go(func() {
			if err := f(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	run("certificate watcher", func() error { return s.opts.Certs.Start(watchCtx) })
	if l := s.listeners[1]; l != nil {
		run("probe server", func() error { return s.probe.Serve(l) })
	}
	if l := s.listeners[2]; l != nil {
		run("metrics server", func() error { return s.metrics.Serve(l) })
	}
	run("webhook server", func() error {
		s.serving.Store(true)
		return s.webhook.ServeTLS(s.listeners[0], "", "")
	})
	webhookAddr, probeAddr, metricsAddr := s.Addr()
	s.opts.Log.Info("Serving", keyWebhook, webhookAddr, keyProbes, probeAddr, keyMetrics, metricsAddr, keyHTTP2, s.opts.EnableHTTP2)
	return errs
}

// waitForStop waits for ctx to end, then fails readiness and serves on for
// ShutdownDelay. A server that fails ends the wait with its error.
func (s *Server) waitForStop(ctx context.Context, errs <-chan error) (err error) {
	select {
	case <-ctx.Done():
	case err = <-errs:
		s.opts.Log.Error(err, "A server failed; shutting down")
	}
	s.stopping.Store(true)
	if err != nil || s.opts.ShutdownDelay <= 0 {
		return err
	}
	s.opts.Log.Info("Shutting down: serving with connections closed after each response", keyDelay, s.opts.ShutdownDelay)
	select {
	case <-time.After(s.opts.ShutdownDelay):
	case <-s.endDelay:
	case err = <-errs:
		s.opts.Log.Error(err, "A server failed while shutting down")
	}
	return err
}

// drain shuts the servers down, the webhook first: its in-flight admissions
// must not be lost.
func (s *Server) drain(ctx context.Context) error {
	s.opts.Log.Info("Shutting down: draining in-flight requests", keyTimeout, s.opts.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	var drainErr error
	if err := s.webhook.Shutdown(shutdownCtx); err != nil {
		drainErr = fmt.Errorf("drain webhook requests: %w", err)
	}
	return errors.Join(drainErr, s.probe.Shutdown(shutdownCtx), s.metrics.Shutdown(shutdownCtx))
}
