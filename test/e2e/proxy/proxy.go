// Package proxy stands in for a Service in the local environment: a TCP
// round-robin proxy over the ready replicas of a workload, as kube-proxy
// routes a Service's traffic to the ready endpoints.
package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Backend is one replica: where it serves, and where it answers /readyz.
type Backend struct {
	Addr     string
	ReadyURL string
}

// Proxy forwards each accepted connection to the next ready backend.
type Proxy struct {
	listener net.Listener
	backends []Backend
	client   *http.Client

	mu       sync.Mutex
	ready    []bool // by /readyz
	draining []bool // taken out of the endpoints, as on Pod deletion
	next     int
	conns    map[net.Conn]struct{}
	closed   bool

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// Start listens on addr and serves until Close. A backend receives new
// connections while its /readyz answers 200 (polled every interval) and it
// is not draining. Established connections are never cut by the proxy:
// like conntrack entries, they last until one side closes them.
func Start(addr string, interval time.Duration, backends ...Backend) (*Proxy, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		listener: l,
		backends: backends,
		client:   &http.Client{Timeout: time.Second},
		ready:    make([]bool, len(backends)),
		draining: make([]bool, len(backends)),
		conns:    map[net.Conn]struct{}{},
		stop:     cancel,
	}
	p.wg.Add(2)
	go func() { defer p.wg.Done(); p.probe(ctx, interval) }()
	go func() { defer p.wg.Done(); p.accept() }()
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.listener.Addr().String() }

// SetDraining takes backend i out of (or back into) rotation for new
// connections, as the endpoints controller does when a Pod is deleted.
func (p *Proxy) SetDraining(i int, draining bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draining[i] = draining
}

// Ready reports how many backends receive new connections.
func (p *Proxy) Ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for i := range p.backends {
		if p.ready[i] && !p.draining[i] {
			n++
		}
	}
	return n
}

// Close stops listening and closes every proxied connection.
func (p *Proxy) Close() error {
	p.stop()
	err := p.listener.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) probe(ctx context.Context, interval time.Duration) {
	for {
		for i, b := range p.backends {
			ok := p.probeOne(ctx, b.ReadyURL)
			p.mu.Lock()
			p.ready[i] = ok
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func (p *Proxy) probeOne(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// pick returns the next ready backends in round-robin order.
func (p *Proxy) pick() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	n := len(p.backends)
	for k := range n {
		i := (p.next + k) % n
		if p.ready[i] && !p.draining[i] {
			out = append(out, p.backends[i].Addr)
		}
	}
	p.next = (p.next + 1) % max(n, 1)
	return out
}

func (p *Proxy) accept() {
	for {
		c, err := p.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.forward(c) }()
	}
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		_ = c.Close()
	}
}

// forward connects c to a ready backend. With no backend reachable the
// client's connection is closed, as a Service without endpoints rejects it.
func (p *Proxy) forward(c net.Conn) {
	var upstream net.Conn
	for _, addr := range p.pick() {
		u, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			upstream = u
			break
		}
	}
	if upstream == nil || !p.track(upstream) {
		p.untrack(c)
		if upstream != nil {
			_ = upstream.Close()
		}
		return
	}
	// When either side ends the connection, end the other: a backend that
	// closes a kept-alive connection must close it towards the client too.
	var once sync.Once
	done := func() { once.Do(func() { p.untrack(c, upstream) }) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(upstream, c); done() }()
	go func() { defer wg.Done(); pipe(c, upstream); done() }()
	wg.Wait()
}

// pipe copies until src ends or fails.
func pipe(dst, src net.Conn) { _, _ = io.Copy(dst, src) }
