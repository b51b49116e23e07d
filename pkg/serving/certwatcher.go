package serving

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/metric"
)

const (
	// Messages of the certificate watcher's lines (docs/operations.md, "Logs").
	MsgCertificateLoaded     = "Serving certificate loaded"
	MsgCertificateLoadFailed = "Cannot load the serving certificate"

	// DefaultPollInterval is how often the files are read anyway, for what events
	// miss (a later directory).
	DefaultPollInterval = 10 * time.Second
	// debounce makes one reload of the events of one kubelet update: new
	// timestamped directory, ..data_tmp symlink, rename to ..data, removal of the
	// old directory.
	debounce = 100 * time.Millisecond
)

// CertWatcherOptions configure a CertWatcher.
type CertWatcherOptions struct {
	CertFile, KeyFile string
	PollInterval      time.Duration // defaults to DefaultPollInterval
	Metrics           *CertMetrics  // optional: nil registers them nowhere
	Log               logr.Logger
}

// CertWatcher serves the last good certificate and key read from two files
// and reloads them when they change. It can start before the files exist.
type CertWatcher struct {
	opts    CertWatcherOptions
	current atomic.Pointer[tls.Certificate]
	// The files of current; only the Start loop uses them.
	certPEM, keyPEM []byte
}

// NewCertWatcher returns a watcher; it reads nothing until Start.
func NewCertWatcher(o CertWatcherOptions) (*CertWatcher, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, errors.New("certificate watcher: both a certificate and a key file are required")
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Metrics == nil {
		o.Metrics, _ = NewCertMetrics(prometheus.NewRegistry()) // a fresh registry cannot refuse them
	}
	return &CertWatcher{opts: o}, nil
}

// GetCertificate is for tls.Config; it fails the handshake while no certificate
// has loaded.
func (w *CertWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := w.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("no serving certificate has loaded yet")
}

// Loaded reports whether a certificate is being served.
func (w *CertWatcher) Loaded() bool { return w.current.Load() != nil }

// Start loads the pair and keeps it current until ctx ends. It fails only when
// it cannot watch at all; missing or bad files are logged, counted as errors,
// and retried. It watches the directories, not the files: kubelet's rename of
// ..data_tmp over ..data is an event there.
func (w *CertWatcher) Start(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("create file watcher: %w", err)
	}
	defer fw.Close() //nolint:errcheck // closing a watcher on the way out; nothing to act on
	dirs := slices.Compact([]string{filepath.Dir(w.opts.CertFile), filepath.Dir(w.opts.KeyFile)})
	// Adding a watched directory again changes nothing; a missing one is added by a later poll.
	rescan := func() {
		for _, dir := range dirs {
			if err := fw.Add(dir); err != nil {
				w.opts.Log.V(1).Info("Cannot watch the certificate directory yet; polling", keyDir, dir, logkeys.Error, err.Error())
			}
		}
		w.reload()
	}
	rescan()

	poll := time.NewTicker(w.opts.PollInterval)
	defer poll.Stop()
	var pending <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			w.opts.Log.V(2).Info("Certificate directory event", keyEvent, ev.String())
			if pending == nil {
				pending = time.After(debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("file watcher closed")
			}
			w.opts.Log.Error(err, "Certificate file watch error; the poll goes on")
		case <-pending:
			pending = nil
			w.reload()
		case <-poll.C:
			rescan()
		}
	}
}

// reload serves the pair if it is new and valid, else keeps the last good one.
func (w *CertWatcher) reload() {
	if err := w.load(); err != nil {
		w.opts.Metrics.reloads.WithLabelValues(ReloadError).Inc()
		w.opts.Log.Error(err, MsgCertificateLoadFailed, logkeys.KeptPrevious, w.Loaded())
	}
}

func (w *CertWatcher) load() error {
	certPEM, err := os.ReadFile(w.opts.CertFile)
	if err != nil {
		return fmt.Errorf("read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(w.opts.KeyFile)
	if err != nil {
		return fmt.Errorf("read key: %w", err)
	}
	if w.Loaded() && bytes.Equal(certPEM, w.certPEM) && bytes.Equal(keyPEM, w.keyPEM) {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("load the pair %s, %s: %w", w.opts.CertFile, w.opts.KeyFile, err)
	}
	w.certPEM, w.keyPEM = certPEM, keyPEM
	w.current.Store(&cert)
	leaf := cert.Leaf // set by X509KeyPair since Go 1.23
	w.opts.Metrics.reloads.WithLabelValues(ReloadSuccess).Inc()
	w.opts.Metrics.notAfter.Set(float64(leaf.NotAfter.Unix()))
	w.opts.Log.Info(MsgCertificateLoaded, logkeys.Fingerprint, cabundle.Fingerprint(leaf),
		logkeys.Serial, leaf.SerialNumber.String(), logkeys.Subject, leaf.Subject.String(),
		logkeys.NotAfter, cabundle.FormatTime(leaf.NotAfter))
	return nil
}

// Results of a certificate load, the "result" label of snatch_webhook_cert_reloads_total.
const (
	ReloadSuccess = "success"
	ReloadError   = "error"
)

// CertMetrics are the serving certificate's metrics (docs/operations.md, "Metrics").
type CertMetrics struct {
	reloads  *prometheus.CounterVec
	notAfter prometheus.Gauge
}

// NewCertMetrics creates the certificate metrics and registers them on reg.
func NewCertMetrics(reg prometheus.Registerer) (*CertMetrics, error) {
	m := &CertMetrics{
		reloads: metric.CounterVec("snatch_webhook_cert_reloads_total",
			"Loads of the serving certificate and key that changed the served pair (success) or failed and kept the last good pair (error).",
			[]string{"result"}, []string{ReloadSuccess}, []string{ReloadError}),
		notAfter: metric.Gauge("snatch_webhook_serving_cert_not_after_seconds",
			"Expiry (notAfter) of the served certificate, in seconds since the Unix epoch; 0 until one has loaded."),
	}
	if err := metric.Register(reg, "certificate", m.reloads, m.notAfter); err != nil {
		return nil, err
	}
	return m, nil
}
