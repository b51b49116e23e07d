package kubelet

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// prober runs the readiness probe of one start of a container, as the
// kubelet's probe worker does: the first probe at once (after
// initialDelaySeconds), then one every periodSeconds, each with
// timeoutSeconds. The result starts as failure and changes after
// successThreshold consecutive successes or failureThreshold consecutive
// failures; report is called with each change. Without a readiness probe
// the container is ready once started. Only httpGet and tcpSocket probes
// are run; an exec or grpc probe never succeeds here.
type prober struct {
	probe     *corev1.Probe
	container *corev1.Container
	ports     *portMap
	// maxPeriod, when positive, bounds periodSeconds and
	// initialDelaySeconds (Options.MaxProbePeriod).
	maxPeriod time.Duration
	client    *http.Client
}

func newProber(c *corev1.Container, ports *portMap, maxPeriod time.Duration) *prober {
	return &prober{
		probe: c.ReadinessProbe, container: c, ports: ports, maxPeriod: maxPeriod,
		client: &http.Client{Transport: &http.Transport{
			// The kubelet opens a new connection for every probe and does not
			// verify an HTTPS probe's certificate.
			DisableKeepAlives: true,
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet probes
		}},
	}
}

// run probes until ctx ends.
func (p *prober) run(ctx context.Context, report func(ready bool)) {
	defer p.client.CloseIdleConnections()
	if p.probe == nil {
		report(true)
		return
	}
	period := p.bound(seconds(p.probe.PeriodSeconds, 10))
	if !sleep(ctx, p.bound(seconds(p.probe.InitialDelaySeconds, 0))) {
		return
	}
	success, failure := max(p.probe.SuccessThreshold, 1), p.probe.FailureThreshold
	if failure <= 0 {
		failure = 3
	}
	result := false
	var successes, failures int32
	for {
		if p.once(ctx) {
			successes, failures = successes+1, 0
		} else {
			successes, failures = 0, failures+1
		}
		switch {
		case ctx.Err() != nil:
			return
		case !result && successes >= success:
			result = true
			report(true)
		case result && failures >= failure:
			result = false
			report(false)
		}
		if !sleep(ctx, period) {
			return
		}
	}
}

func (p *prober) bound(d time.Duration) time.Duration {
	if p.maxPeriod > 0 && d > p.maxPeriod {
		return p.maxPeriod
	}
	return d
}

// once runs the probe once; every address is on loopback.
func (p *prober) once(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, seconds(p.probe.TimeoutSeconds, 1))
	defer cancel()
	switch h := p.probe.ProbeHandler; {
	case h.HTTPGet != nil:
		addr, ok := p.addr(h.HTTPGet.Port)
		if !ok {
			return false
		}
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		path := h.HTTPGet.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+path, nil)
		if err != nil {
			return false
		}
		req.Header.Set("User-Agent", "kube-probe/1.36")
		req.Header.Set("Accept", "*/*")
		for _, hdr := range h.HTTPGet.HTTPHeaders {
			req.Header.Set(hdr.Name, hdr.Value)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
		_ = resp.Body.Close()
		// The kubelet counts 2xx and 3xx as success.
		return resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusBadRequest
	case h.TCPSocket != nil:
		addr, ok := p.addr(h.TCPSocket.Port)
		if !ok {
			return false
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return false
		}
		_ = conn.Close()
		return true
	}
	return false
}

func (p *prober) addr(port intstr.IntOrString) (string, bool) {
	n, ok := containerPort(p.container, port)
	if !ok {
		return "", false
	}
	a, err := p.ports.actual(n)
	if err != nil {
		return "", false
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(a)), true
}

// seconds is s seconds, or def seconds when s is not positive.
func seconds(s int32, def int32) time.Duration {
	if s <= 0 {
		s = def
	}
	return time.Duration(s) * time.Second
}

// sleep waits d and reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
