package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/logtest"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// testReview is an AdmissionReview that the webhook patches, and its uid.
const (
	testReview    = "review-pod-5k5.json"
	testReviewUID = "705ab4f5-6393-11e8-b7cc-42010a800002"
)

// fixedClock stops zap's clock, so that every line falls in the same
// second of the sampler however slow the machine is.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// binaryLogger is the logger run builds with the default --zap-* flags,
// writing to out at a fixed time.
func binaryLogger(out io.Writer) logr.Logger {
	return newLogger(crzap.Options{
		DestWriter: out,
		ZapOpts:    []zap.Option{zap.WithClock(fixedClock{time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC)})},
	})
}

// serveWithLogger runs the webhook as run wires it, with log, and returns
// the URL of its mutating path and a client that trusts it.
func serveWithLogger(t *testing.T, log logr.Logger) (string, *http.Client) {
	t.Helper()
	certDir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, certDir, ca.MustIssue(t, certtest.Localhost(1)).Files())
	wh := startWebhookWith(t, certDir, log)
	waitReady(t, wh.probe)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"},
		MaxIdleConnsPerHost: 8,
	}}
	t.Cleanup(client.CloseIdleConnections)
	return wh.url + webhookpath.MutatePod, client
}

// review reads testReview with its uid replaced by uid.
func review(t *testing.T, uid string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "pkg", "admission", "testdata", testReview))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Replace(body, []byte(testReviewUID), []byte(uid), 1)
}

func post(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// decisionUIDs returns the uid of each decision line of out, in order.
func decisionUIDs(t *testing.T, out *logtest.Buffer) []string {
	t.Helper()
	var uids []string
	for _, line := range out.Objects(t) {
		if line["msg"] == admission.MsgDecision {
			uid, _ := line["uid"].(string)
			uids = append(uids, uid)
		}
	}
	return uids
}

// A burst of reviews within one second of the logger's clock is one
// decision line each; controller-runtime's sampler would keep 109 of them.
// Other repeated lines are still sampled.
func TestDecisionLinesAreNeverSampled(t *testing.T) {
	const burst, workers = 1000, 8
	out := &logtest.Buffer{}
	log := binaryLogger(out)
	url, client := serveWithLogger(t, log)

	bodies := make(chan []byte, burst)
	for i := range burst {
		bodies <- review(t, fmt.Sprintf("burst-%04d", i))
	}
	close(bodies)
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for body := range bodies {
				if err := post(client, url, body); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	uids := decisionUIDs(t, out)
	seen := map[string]bool{}
	for _, uid := range uids {
		seen[uid] = true
	}
	if len(uids) != burst || len(seen) != burst {
		t.Errorf("%d decision lines for %d distinct uids, want %d of each", len(uids), len(seen), burst)
	}

	const repeated = "Repeated line"
	for range burst {
		log.WithName("serving").Info(repeated)
	}
	if got, want := strings.Count(out.String(), `"msg":"`+repeated+`"`), 100+(burst-100)/100; got != want {
		t.Errorf("%d of %d repeated lines of another logger, want the sampler's %d", got, burst, want)
	}
}
