package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// BenchmarkServeOverTLS sends reviews one at a time over a kept-alive
// TLS 1.3 connection to the wired webhook, as the API server does, with
// the production JSON logger writing to io.Discard. Besides ns/op (the
// round trip), it reports the process CPU per review (cpu-ns/op, client
// included, so an upper bound for the server) and the p99 round trip.
//
// Run with: go test ./cmd/snatch-webhook -run '^$' -bench Serve -benchmem
func BenchmarkServeOverTLS(b *testing.B) {
	url, client := serveForBench(b)
	for _, payload := range []struct{ name, file string }{
		{"pod_5k5", "review-pod-5k5.json"},
		{"pod_8k8_managed_fields", "review-pod-8k8-managed-fields.json"},
	} {
		body, err := os.ReadFile(filepath.Join("..", "..", "pkg", "admission", "testdata", payload.file))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(payload.name, func(b *testing.B) {
			post := func() {
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			post() // the handshake is not part of the measure
			var lat []time.Duration
			cpu0 := cpuTime(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				t0 := time.Now()
				post()
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(len(lat)), "cpu-ns/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// serveForBench starts the wired webhook on a free port with the
// production JSON logger writing to io.Discard, until the benchmark ends,
// and returns its mutation URL and a client that keeps one connection.
func serveForBench(b *testing.B) (string, *http.Client) {
	b.Helper()
	certDir := b.TempDir()
	ca := certtest.MustCA(b, certtest.Options{})
	certtest.MustWriteAtomic(b, certDir, ca.MustIssue(b, certtest.Localhost(1)).Files())
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	w := startWebhookWith(b, certDir, zapr.NewLogger(zap.New(core)))
	poll.Eventually(b, "the server to be ready", func(context.Context) error { return w.srv.Ready() })
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"},
		MaxIdleConnsPerHost: 1,
	}}
	return w.url + "/mutate-pod", client
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
