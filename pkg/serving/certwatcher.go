package serving

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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
	"k8s.io/utils/clock"

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
	// DNSName is the name the API server calls, <service>.<namespace>.svc; a
	// certificate not valid for it is refused. Empty skips the name check.
	DNSName      string
	PollInterval time.Duration // defaults to DefaultPollInterval
	Metrics      *CertMetrics  // optional: nil registers them nowhere
	Log          logr.Logger
	Clock        clock.PassiveClock // judges the validity period; defaults to the real clock
}

// CertWatcher serves the last good certificate and key read from two files
// and reloads them when they change. It can start before the files exist.
//
// A pair is good when it parses, the key matches, and the certificate is
// valid now and for DNSName: the API server would refuse any other, so
// serving it would fail every call open. A pair that is not good is counted
// by reason and logged, and the last good pair stays. At start there is no
// last good pair: nothing is served and Ready fails until a good pair loads,
// which the poll retries, so a certificate issued a few seconds ahead of
// this clock is served once it is valid.
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
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
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

// reload serves the pair if it is new and good, else keeps the last good one.
func (w *CertWatcher) reload() {
	leaf, reason, err := w.load()
	if err == nil {
		return
	}
	w.opts.Metrics.reloads.WithLabelValues(ReloadError).Inc()
	w.opts.Metrics.failures.WithLabelValues(reason).Inc()
	kv := []any{logkeys.Reason, reason, logkeys.KeptPrevious, w.Loaded()}
	if leaf != nil {
		kv = append(kv, logkeys.Fingerprint, cabundle.Fingerprint(leaf), logkeys.Serial, leaf.SerialNumber.String(),
			logkeys.Subject, leaf.Subject.String(), logkeys.NotAfter, cabundle.FormatTime(leaf.NotAfter))
	}
	w.opts.Log.Error(err, MsgCertificateLoadFailed, kv...)
}

// load reads the pair and serves it if it is good; on failure it returns the
// reason and the certificate refused, when it parsed.
func (w *CertWatcher) load() (*x509.Certificate, string, error) {
	certPEM, err := os.ReadFile(w.opts.CertFile)
	if err != nil {
		return nil, ReasonUnreadable, fmt.Errorf("read certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(w.opts.KeyFile)
	if err != nil {
		return nil, ReasonUnreadable, fmt.Errorf("read key: %w", err)
	}
	if w.Loaded() && bytes.Equal(certPEM, w.certPEM) && bytes.Equal(keyPEM, w.keyPEM) {
		return nil, "", nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, ReasonInvalidPair, fmt.Errorf("load the pair %s, %s: %w", w.opts.CertFile, w.opts.KeyFile, err)
	}
	leaf := cert.Leaf // set by X509KeyPair since Go 1.23
	if reason, err := w.judge(leaf); err != nil {
		return leaf, reason, fmt.Errorf("refuse the certificate in %s: %w", w.opts.CertFile, err)
	}
	w.certPEM, w.keyPEM = certPEM, keyPEM
	w.current.Store(&cert)
	w.opts.Metrics.reloads.WithLabelValues(ReloadSuccess).Inc()
	w.opts.Metrics.notAfter.Set(float64(leaf.NotAfter.Unix()))
	w.opts.Log.Info(MsgCertificateLoaded, logkeys.Fingerprint, cabundle.Fingerprint(leaf),
		logkeys.Serial, leaf.SerialNumber.String(), logkeys.Subject, leaf.Subject.String(),
		logkeys.NotAfter, cabundle.FormatTime(leaf.NotAfter))
	return nil, "", nil
}

// judge says why the API server would refuse leaf now, if it would: the
// validity period as crypto/x509 reads it (notBefore and notAfter inclusive),
// and the name by x509's VerifyHostname.
func (w *CertWatcher) judge(leaf *x509.Certificate) (string, error) {
	now := w.opts.Clock.Now()
	switch {
	case now.After(leaf.NotAfter):
		return ReasonExpired, fmt.Errorf("it expired at %s (now %s)", cabundle.FormatTime(leaf.NotAfter), cabundle.FormatTime(now))
	case now.Before(leaf.NotBefore):
		return ReasonNotYetValid, fmt.Errorf("it is not valid before %s (now %s)", cabundle.FormatTime(leaf.NotBefore), cabundle.FormatTime(now))
	}
	if w.opts.DNSName != "" {
		if err := leaf.VerifyHostname(w.opts.DNSName); err != nil {
			return ReasonWrongName, fmt.Errorf("it is not valid for %s, the name the API server calls: %w", w.opts.DNSName, err)
		}
	}
	return "", nil
}

// Results of a certificate load, the "result" label of snatch_webhook_cert_reloads_total.
const (
	ReloadSuccess = "success"
	ReloadError   = "error"
)

// Reasons of a failed load, the "reason" label of
// snatch_webhook_cert_reload_failures_total and the reason of its log line.
const (
	ReasonUnreadable  = "unreadable"    // a file cannot be read, e.g. before the Secret exists
	ReasonInvalidPair = "invalid-pair"  // the files do not parse, or the key does not match
	ReasonExpired     = "expired"       // the certificate's notAfter has passed
	ReasonNotYetValid = "not-yet-valid" // the certificate's notBefore is still ahead
	ReasonWrongName   = "wrong-name"    // the certificate is not valid for CertWatcherOptions.DNSName
)

// CertMetrics are the serving certificate's metrics (docs/operations.md, "Metrics").
type CertMetrics struct {
	reloads  *prometheus.CounterVec
	failures *prometheus.CounterVec
	notAfter prometheus.Gauge
}

// NewCertMetrics creates the certificate metrics and registers them on reg.
func NewCertMetrics(reg prometheus.Registerer) (*CertMetrics, error) {
	m := &CertMetrics{
		reloads: metric.CounterVec("snatch_webhook_cert_reloads_total",
			"Loads of the serving certificate and key that changed the served pair (success) or failed and kept the last good pair (error).",
			[]string{"result"}, []string{ReloadSuccess}, []string{ReloadError}),
		failures: metric.CounterVec("snatch_webhook_cert_reload_failures_total",
			"Loads of the serving certificate and key that failed and kept the last good pair, by reason.",
			[]string{"reason"}, []string{ReasonUnreadable}, []string{ReasonInvalidPair}, []string{ReasonExpired},
			[]string{ReasonNotYetValid}, []string{ReasonWrongName}),
		notAfter: metric.Gauge("snatch_webhook_serving_cert_not_after_seconds",
			"Expiry (notAfter) of the served certificate, in seconds since the Unix epoch; 0 until one has loaded."),
	}
	if err := metric.Register(reg, "certificate", m.reloads, m.failures, m.notAfter); err != nil {
		return nil, err
	}
	return m, nil
}
