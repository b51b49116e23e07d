package serving

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// A load names the served certificate by the fingerprint the syncer logs
// for the CAs it writes, and a failed load says whether the last good pair
// is kept.
func TestCertWatcherLogsLoadsWithStableKeys(t *testing.T) {
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	first := ca.MustIssue(t, certtest.Localhost(7))
	certtest.MustWriteAtomic(t, dir, first.Files())

	core, logs := observer.New(zapcore.InfoLevel)
	w, err := NewCertWatcher(CertWatcherOptions{
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
		PollInterval: time.Hour, Log: zapr.NewLogger(zap.New(core)),
	})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "Start", w.Start)

	loaded := waitForLine(t, logs, MsgCertificateLoaded)
	block, _ := pem.Decode(first.CertPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		logkeys.Fingerprint: cabundle.Fingerprint(cert),
		logkeys.Serial:      "7",
		logkeys.Subject:     cert.Subject.String(),
		logkeys.NotAfter:    cert.NotAfter.UTC().Format(time.RFC3339),
	}
	got := loaded.ContextMap()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q line: %s = %v, want %v", MsgCertificateLoaded, k, got[k], v)
		}
	}

	// A key that does not match the certificate is refused; the first pair
	// stays.
	certtest.MustWriteAtomic(t, dir, map[string][]byte{"tls.crt": ca.MustIssue(t, certtest.Localhost(8)).CertPEM, "tls.key": first.KeyPEM})
	failed := waitForLine(t, logs, MsgCertificateLoadFailed)
	if failed.Level != zapcore.ErrorLevel || failed.ContextMap()[logkeys.KeptPrevious] != true {
		t.Errorf("%q at level %s with %v, want error level and %s=true", MsgCertificateLoadFailed, failed.Level, failed.ContextMap(), logkeys.KeptPrevious)
	}
	if _, ok := failed.ContextMap()[logkeys.Error]; !ok {
		t.Errorf("%q line lacks %q: %v", MsgCertificateLoadFailed, logkeys.Error, failed.ContextMap())
	}
}

func waitForLine(t *testing.T, logs *observer.ObservedLogs, msg string) observer.LoggedEntry {
	t.Helper()
	var line observer.LoggedEntry
	poll.Eventually(t, fmt.Sprintf("a %q line", msg), func(context.Context) error {
		lines := logs.FilterMessage(msg).All()
		if len(lines) == 0 {
			return fmt.Errorf("logged: %v", logs.All())
		}
		line = lines[0]
		return nil
	})
	return line
}

// net/http's own messages reach the structured log at verbosity 1, trimmed.
func TestErrorLogRoutesNetHTTPMessages(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	log.New(errorLog{zapr.NewLogger(zap.New(core))}, "", 0).Printf("http: TLS handshake error from %s: EOF\n", "10.0.0.1:5000")
	all := logs.All()
	if len(all) != 1 || all[0].Message != "http: TLS handshake error from 10.0.0.1:5000: EOF" || all[0].Level != zapcore.DebugLevel {
		t.Fatalf("logged %v, want one line at verbosity 1 (debug) with the trimmed message", all)
	}
	core, logs = observer.New(zapcore.InfoLevel)
	log.New(errorLog{zapr.NewLogger(zap.New(core))}, "", 0).Print("http: TLS handshake error")
	if logs.Len() != 0 {
		t.Fatalf("logged %v at verbosity 0, want nothing", logs.All())
	}
}
