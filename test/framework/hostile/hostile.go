// Package hostile is the hostile clients of an admission webhook that the
// benchmarks and the end-to-end suite set against the webhook: connections
// that claim a large body and send none of it, send the largest review
// slowly, or send nothing after the handshake (docs/architecture.md).
package hostile

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LargestReview is the review of a Pod of the API server's largest request,
// 3 MiB of '<', each escaped to six bytes.
func LargestReview() []byte {
	pod, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "huge", "annotations": map[string]string{"a": strings.Repeat("<", 3<<20-1024)}},
		"spec":     map[string]any{"containers": []map[string]string{{"name": "c", "image": "i"}}}})
	return fmt.Appendf(nil, `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"huge","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"kyma-system","operation":"CREATE","object":%s}}`, pod)
}

// Clients attack the webhook at Addr on many connections, each
// opened again whenever the webhook closes it: ClaimConns send the headers
// of a 32 MiB body and nothing more, SlowConns send LargestReview slowly,
// IdleConns finish the TLS handshake and send nothing.
type Clients struct {
	Addr string
	TLS  *tls.Config
}

// Connections of each kind of Clients, and the pace of the slow ones.
const (
	ClaimConns = 64
	SlowConns  = 8
	IdleConns  = 1024
	slowChunk  = 256 << 10
	slowPause  = 50 * time.Millisecond
)

// Start runs the clients in wg until ctx ends.
func (h Clients) Start(ctx context.Context, wg *sync.WaitGroup) {
	huge := LargestReview()
	claim := "POST /mutate-pod HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(32<<20) + "\r\n\r\n"
	slow := "POST /mutate-pod HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(huge)) + "\r\n\r\n"
	for range ClaimConns {
		wg.Go(func() { h.loop(ctx, func(c *tls.Conn) { _, _ = io.WriteString(c, claim) }) })
	}
	for range SlowConns {
		wg.Go(func() {
			h.loop(ctx, func(c *tls.Conn) {
				_, _ = io.WriteString(c, slow)
				for rest := huge; len(rest) > 0 && ctx.Err() == nil; rest = rest[min(slowChunk, len(rest)):] {
					if _, err := c.Write(rest[:min(slowChunk, len(rest))]); err != nil {
						return
					}
					time.Sleep(slowPause)
				}
			})
		})
	}
	for range IdleConns {
		wg.Go(func() { h.loop(ctx, func(*tls.Conn) {}) })
	}
}

// loop connects, sends what exchange sends, and waits for the webhook to
// close the connection (at its request timeout), until ctx ends.
func (h Clients) loop(ctx context.Context, exchange func(*tls.Conn)) {
	d := tls.Dialer{Config: h.TLS}
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", h.Addr)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		conn := c.(*tls.Conn)
		closed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, conn); close(closed) }() // sees the webhook's close
		exchange(conn)
		select {
		case <-ctx.Done():
		case <-closed:
		}
		_ = conn.Close()
		<-closed
	}
}
