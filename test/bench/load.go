package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/test/process"
)

// newTLSClient keeps up to conns TLS connections alive to one host, over
// HTTP/1.1 as the API server calls webhooks.
func newTLSClient(roots *x509.CertPool, conns int) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
}

// load is one cell: conc workers post body to url in a closed loop, each
// on its own kept-alive connection, for a warm-up and then for duration
// or until maxReviews, whichever comes first.
type load struct {
	client     *http.Client
	url        string
	body       []byte
	conc       int
	duration   time.Duration
	maxReviews int
	// server is the process whose CPU time and RSS are read.
	server *process.Process
}

var patchField = []byte(`"patch"`)

func (l load) run(ctx context.Context) (LoadStats, error) {
	warmup := min(l.duration/4, time.Second)
	if _, _, err := l.loop(ctx, warmup); err != nil {
		return LoadStats{}, fmt.Errorf("warm-up: %w", err)
	}

	cpu0, err := process.CPUTime(l.server.PID())
	if err != nil {
		return LoadStats{}, err
	}
	self0 := selfCPU()
	stopSampling := sampleMaxRSS(l.server)
	start := time.Now()
	lat, errs, err := l.loop(ctx, l.duration)
	elapsed := time.Since(start)
	maxRSS := stopSampling()
	if err != nil {
		return LoadStats{}, err
	}
	cpu1, err := process.CPUTime(l.server.PID())
	if err != nil {
		return LoadStats{}, err
	}
	selfUsed := selfCPU() - self0

	n := len(lat)
	s := LoadStats{
		Reviews:          n,
		Errors:           errs,
		Seconds:          elapsed.Seconds(),
		ReviewsPerSecond: float64(n) / elapsed.Seconds(),
		ServerCPUSeconds: cpu1 - cpu0,
		RSSMiB:           mib(maxRSS),
		LoadCPUShare:     selfUsed.Seconds() / elapsed.Seconds(),
	}
	if n > 0 {
		slices.Sort(lat)
		s.P50Ms, s.P99Ms, s.P999Ms = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(percentile(lat, 99.9))
		s.MaxMs = ms(lat[n-1])
		s.CPUMsPerReview = 1000 * s.ServerCPUSeconds / float64(n)
		s.CPUSecondsPer10k = s.ServerCPUSeconds * 10000 / float64(n)
	}
	return s, nil
}

// sampleMaxRSS samples the RSS of p until the function it returns is
// called, which returns the largest sample.
func sampleMaxRSS(p *process.Process) (stop func() int64) {
	var maxRSS int64
	stopSampling, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		wait.NonSlidingUntil(func() {
			if rss, err := p.RSS(); err == nil {
				maxRSS = max(maxRSS, rss)
			}
		}, 50*time.Millisecond, stopSampling)
	}()
	return func() int64 {
		close(stopSampling)
		<-sampled
		return maxRSS
	}
}

// loop runs the workers and returns every latency and the number of
// failed reviews; a failed review is any answer but a 200 with a patch.
func (l load) loop(ctx context.Context, d time.Duration) ([]time.Duration, int, error) {
	deadline := time.Now().Add(d)
	var issued atomic.Int64
	var failed atomic.Int64
	var firstErr atomic.Value
	per := make([][]time.Duration, l.conc)
	var wg sync.WaitGroup
	for w := range l.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, min(l.maxReviews/l.conc+1, 1<<16))
			var buf bytes.Buffer
			for ctx.Err() == nil && time.Now().Before(deadline) && issued.Add(1) <= int64(l.maxReviews) {
				t0 := time.Now()
				err := l.post(&buf)
				lat = append(lat, time.Since(t0))
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
			per[w] = lat
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	var all []time.Duration
	for _, p := range per {
		all = append(all, p...)
	}
	// Every review failing is a broken setup, not a figure.
	if f := int(failed.Load()); f > 0 && f == len(all) {
		return nil, f, fmt.Errorf("all %d reviews failed, the first with: %v", f, firstErr.Load())
	}
	return all, int(failed.Load()), nil
}

func (l load) post(buf *bytes.Buffer) error {
	req, err := http.NewRequest(http.MethodPost, l.url, bytes.NewReader(l.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s: %s", resp.Status, truncate(buf.Bytes()))
	case !bytes.Contains(buf.Bytes(), patchField):
		return fmt.Errorf("no patch in the response: %s", truncate(buf.Bytes()))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// selfCPU is this process's user plus system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile is the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }
