package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Timeouts of the webhook listener. The API server gives a webhook at most
// 30 s (timeoutSeconds), and its requests are a few KB, so slow clients are
// cut off long before they can hold many connections.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// DefaultShutdownTimeout bounds the drain of in-flight requests; together
// with DefaultShutdownDelay it fits in Kubernetes' default termination grace
// period of 30 s.
const DefaultShutdownTimeout = 20 * time.Second

// DefaultShutdownDelay is how long a stopping webhook keeps serving, with
// every response closing its connection, before it closes the idle ones.
const DefaultShutdownDelay = 5 * time.Second

// Options configure a Server.
type Options struct {
	// WebhookAddr is the TLS listener, e.g. ":9443".
	WebhookAddr string
	// ProbeAddr serves /healthz and /readyz over plain HTTP; "0" disables it.
	ProbeAddr string
	// MetricsAddr serves /metrics over plain HTTP; "0" disables it.
	MetricsAddr string
	// EnableHTTP2 offers h2 on the webhook listener. It is off by default:
	// HTTP/1.1 is all the API server needs, and it keeps the webhook out of
	// the reach of HTTP/2 stream attacks (CVE-2023-44487, CVE-2023-39325).
	EnableHTTP2 bool

	// Webhook serves the admission paths.
	Webhook http.Handler
	// Certs provides the serving certificate.
	Certs *CertWatcher
	// Gatherer is exposed on /metrics.
	Gatherer prometheus.Gatherer
	Log      logr.Logger
	// ShutdownTimeout defaults to DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// ShutdownDelay is the first phase of a shutdown: readiness fails, the
	// webhook keeps serving, and every response tells the client to close
	// its connection. The API server keeps its kept-alive connections to a
	// terminating replica until it uses them; a connection closed while
	// idle can race with a request being written to it, which the API
	// server does not retry and so admits the Pod without its affinity.
	// Retiring each connection after a response avoids that race. Zero
	// skips the phase; negative is treated as zero.
	ShutdownDelay time.Duration
}

// Server runs the webhook's TLS listener, its probes and its metrics, and
// the certificate watcher behind them.
type Server struct {
	opts Options

	webhook, probe, metrics *http.Server
	listeners               [3]net.Listener // webhook, probe, metrics; nil when disabled

	serving  atomic.Bool // the webhook listener is accepting
	stopping atomic.Bool // shutdown has begun

	// endDelay, when closed, ends the shutdown delay early; tests use it.
	endDelay chan struct{}
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
	if o.Gatherer == nil {
		o.Gatherer = prometheus.NewRegistry()
	}
	s := &Server{opts: o, endDelay: make(chan struct{})}

	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(o.EnableHTTP2)
	s.webhook = &http.Server{
		Handler: s.closeWhenStopping(o.Webhook),
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: o.Certs.GetCertificate,
		},
		Protocols:         protocols,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          newErrorLog(o.Log.WithName("webhook-http")),
	}

	probes := http.NewServeMux()
	probes.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeProbe(w, nil) })
	probes.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { writeProbe(w, s.Ready()) })
	s.probe = plainServer(probes, o.Log.WithName("probe-http"))

	metrics := http.NewServeMux()
	metrics.Handle("/metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{ErrorLog: newErrorLog(o.Log.WithName("metrics"))}))
	s.metrics = plainServer(metrics, o.Log.WithName("metrics-http"))
	return s, nil
}

// closeWhenStopping makes every response close its connection once
// shutdown has begun, so that clients move to another replica.
func (s *Server) closeWhenStopping(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.stopping.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

func plainServer(h http.Handler, log logr.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          newErrorLog(log),
	}
}

// Ready returns nil when the webhook can serve: a certificate has loaded,
// the listener accepts, and shutdown has not begun.
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

func writeProbe(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// Listen binds the listeners, so that a bad address fails at start and
// tests can learn the ports (Addr) before Serve.
func (s *Server) Listen() error {
	addrs := [3]string{s.opts.WebhookAddr, s.opts.ProbeAddr, s.opts.MetricsAddr}
	for i, addr := range addrs {
		if addr == "" || addr == "0" {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		s.listeners[i] = l
	}
	return nil
}

func (s *Server) closeListeners() {
	for i, l := range s.listeners {
		if l != nil {
			_ = l.Close() // only on a failed start; the error that caused it is returned
			s.listeners[i] = nil
		}
	}
}

// Addr returns the bound address of the webhook, probe and metrics
// listeners (nil when disabled); call it after Listen.
func (s *Server) Addr() (webhook, probe, metrics net.Addr) {
	get := func(l net.Listener) net.Addr {
		if l == nil {
			return nil
		}
		return l.Addr()
	}
	return get(s.listeners[0]), get(s.listeners[1]), get(s.listeners[2])
}

// Serve runs until ctx ends, then fails readiness and shuts down
// gracefully: for ShutdownDelay it keeps serving and closes each connection
// after its response, then it drains in-flight requests for up to
// ShutdownTimeout.
// It calls Listen first if that was not done.
func (s *Server) Serve(ctx context.Context) error {
	if s.listeners[0] == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	log := s.opts.Log
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatch()

	errs := make(chan error, 4)
	var wg sync.WaitGroup
	run := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	run("certificate watcher", func() error { return s.opts.Certs.Start(watchCtx) })
	if l := s.listeners[1]; l != nil {
		run("probe server", func() error { return s.probe.Serve(l) })
	}
	if l := s.listeners[2]; l != nil {
		run("metrics server", func() error { return s.metrics.Serve(l) })
	}
	wl := s.listeners[0]
	run("webhook server", func() error {
		s.serving.Store(true)
		return s.webhook.ServeTLS(wl, "", "")
	})
	webhookAddr, probeAddr, metricsAddr := s.Addr()
	log.Info("Serving", "webhook", webhookAddr, "probes", probeAddr, "metrics", metricsAddr, "http2", s.opts.EnableHTTP2)

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
		log.Error(runErr, "A server failed; shutting down")
	}

	s.stopping.Store(true)
	if runErr == nil && s.opts.ShutdownDelay > 0 {
		log.Info("Shutting down: serving with connections closed after each response", "delay", s.opts.ShutdownDelay)
		select {
		case <-time.After(s.opts.ShutdownDelay):
		case <-s.endDelay:
		case runErr = <-errs:
			log.Error(runErr, "A server failed while shutting down")
		}
	}
	log.Info("Shutting down: draining in-flight requests", "timeout", s.opts.ShutdownTimeout)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	var shutdownErrs []error
	// The webhook first: its in-flight admissions are what must not be lost.
	if err := s.webhook.Shutdown(shutdownCtx); err != nil {
		shutdownErrs = append(shutdownErrs, fmt.Errorf("drain webhook requests: %w", err))
	}
	s.serving.Store(false)
	for _, srv := range []*http.Server{s.probe, s.metrics} {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			shutdownErrs = append(shutdownErrs, err)
		}
	}
	stopWatch()
	wg.Wait()
	close(errs)
	for err := range errs {
		if runErr == nil {
			runErr = err
		}
	}
	return errors.Join(append([]error{runErr}, shutdownErrs...)...)
}
