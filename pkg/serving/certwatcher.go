package serving

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// Messages of the certificate watcher's lines. A loaded line carries the
// keys logkeys.Fingerprint, logkeys.Serial, logkeys.Subject and
// logkeys.NotAfter; compare its fingerprint with the cabundle-syncer's
// logkeys.Fingerprints to see whether the API server trusts the served
// certificate. A failed load is logged at error level with keptPrevious true
// when the last good pair is still served, false when none has loaded and
// the replica is not ready.
const (
	MsgCertificateLoaded     = "Serving certificate loaded"
	MsgCertificateLoadFailed = "Cannot load the serving certificate"
)

// DefaultPollInterval is how often the files are read even without a file
// event. Events are the fast path; the poll catches what they miss, such
// as a directory that did not exist when the watch was set up.
const DefaultPollInterval = 10 * time.Second

// debounce groups the burst of events of one kubelet update (new
// timestamped directory, ..data_tmp symlink, rename to ..data, removal of
// the old directory) into a single reload.
const debounce = 100 * time.Millisecond

// CertWatcherOptions configure a CertWatcher.
type CertWatcherOptions struct {
	CertFile, KeyFile string
	// PollInterval defaults to DefaultPollInterval.
	PollInterval time.Duration
	Metrics      *CertMetrics
	Log          logr.Logger
}

// CertWatcher serves the last good certificate and key read from two files
// and reloads them when they change.
//
// It watches the directories, polls as a fallback, and keeps the last good
// pair when a read fails or the pair does not match. It can start before
// the files exist, as when a Pod starts before its Secret is mounted. Why
// it is not controller-runtime's certwatcher is in the package doc
// (doc.go).
type CertWatcher struct {
	opts CertWatcherOptions

	mu      sync.RWMutex
	current *tls.Certificate
	certPEM []byte
	keyPEM  []byte
}

// NewCertWatcher returns a watcher; it reads nothing until Start.
func NewCertWatcher(o CertWatcherOptions) (*CertWatcher, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, errors.New("certificate watcher: both a certificate and a key file are required")
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	return &CertWatcher{opts: o}, nil
}

// GetCertificate is for tls.Config.GetCertificate. It fails the handshake
// while no certificate has loaded.
func (w *CertWatcher) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.current == nil {
		return nil, errors.New("no serving certificate has loaded yet")
	}
	return w.current, nil
}

// Loaded reports whether a certificate is being served.
func (w *CertWatcher) Loaded() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.current != nil
}

// Start loads the pair and keeps it current until ctx ends. It returns an
// error only when it cannot watch at all; missing or bad files are
// reported through the log and the error metric, and retried.
func (w *CertWatcher) Start(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("create file watcher: %w", err)
	}
	defer fw.Close() //nolint:errcheck // closing a watcher on the way out; nothing to act on

	dirs := map[string]bool{} // directory -> watched
	for _, f := range []string{w.opts.CertFile, w.opts.KeyFile} {
		dirs[filepath.Dir(f)] = false
	}
	watchDirs := func() {
		for dir, watched := range dirs {
			if watched {
				continue
			}
			if err := fw.Add(dir); err != nil {
				w.opts.Log.V(1).Info("Cannot watch the certificate directory yet; polling", "dir", dir, logkeys.Error, err.Error())
				continue
			}
			dirs[dir] = true
		}
	}
	watchDirs()
	w.reload()

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
			w.opts.Log.V(2).Info("Certificate directory event", "event", ev.String())
			if ev.Has(fsnotify.Remove) && dirs[ev.Name] {
				// The directory itself went away; watch it again when it is back.
				dirs[ev.Name] = false
			}
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
			watchDirs()
			w.reload()
		}
	}
}

// reload reads the pair and serves it if it is new and valid.
func (w *CertWatcher) reload() {
	if err := w.load(); err != nil {
		w.opts.Metrics.failed()
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
	w.mu.RLock()
	same := w.current != nil && bytes.Equal(certPEM, w.certPEM) && bytes.Equal(keyPEM, w.keyPEM)
	w.mu.RUnlock()
	if same {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("load the pair %s, %s: %w", w.opts.CertFile, w.opts.KeyFile, err)
	}
	w.mu.Lock()
	w.current, w.certPEM, w.keyPEM = &cert, certPEM, keyPEM
	w.mu.Unlock()

	leaf := cert.Leaf // set by X509KeyPair since Go 1.23
	w.opts.Metrics.reloaded(leaf.NotAfter.Unix())
	w.opts.Log.Info(MsgCertificateLoaded,
		logkeys.Fingerprint, cabundle.Fingerprint(leaf),
		logkeys.Serial, leaf.SerialNumber.String(),
		logkeys.Subject, leaf.Subject.String(),
		logkeys.NotAfter, leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}
