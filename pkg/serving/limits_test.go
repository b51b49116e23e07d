package serving

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// A client that stops sending in the middle of its headers is cut
// off by the webhook listener's RequestTimeout, well before the probe and
// metrics listeners' limits would close it. The client waits clientWait, more
// than the RequestTimeout set and less than those limits.
func TestWebhookListenerCutsOffSlowClientsAtTheRequestTimeout(t *testing.T) {
	const requestTimeout, clientWait = time.Second, 8 * time.Second
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(1)).Files())
	ts := startServer(t, dir, ca, func(o *Options, _ *CertWatcherOptions) { o.RequestTimeout = requestTimeout })
	ts.waitReady(t)
	conn, err := tls.Dial("tcp", ts.webhook, &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /mutate-pod HTTP/1.1\r\nHost: x\r\n"); err != nil { // half the headers
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(clientWait))
	_, err = io.Copy(io.Discard, conn) // returns when the server closes the connection
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection was still open after %s with a request timeout of %s", clientWait, requestTimeout)
	}
}

// While MaxConnections connections are open, however idle, the webhook
// listener accepts no other: a new client's handshake does not complete until
// one of them closes.
func TestWebhookListenerHoldsAtMostMaxConnections(t *testing.T) {
	// A refused handshake is given handshakeWait, well within the request
	// timeout, which would free a slot; one that must complete is given the
	// whole request timeout, however busy the machine.
	const handshakeWait, requestTimeout = 2 * time.Second, 30 * time.Second
	dir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, dir, ca.MustIssue(t, certtest.Localhost(1)).Files())
	ts := startServer(t, dir, ca, func(o *Options, _ *CertWatcherOptions) { o.MaxConnections, o.RequestTimeout = 2, requestTimeout })
	ts.waitReady(t)
	dial := func(wait time.Duration) (*tls.Conn, error) {
		d := tls.Dialer{NetDialer: &net.Dialer{Deadline: time.Now().Add(wait)},
			Config: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}}
		c, err := d.Dial("tcp", ts.webhook)
		if err != nil {
			return nil, err
		}
		return c.(*tls.Conn), nil
	}
	var held []*tls.Conn
	for i := range 2 {
		c, err := dial(requestTimeout)
		if err != nil {
			t.Fatalf("connection %d of 2: %v", i+1, err)
		}
		held = append(held, c)
	}
	if c, err := dial(handshakeWait); err == nil {
		_ = c.Close()
		t.Fatal("a third connection completed its handshake while two were open, with MaxConnections 2")
	}
	_ = held[0].Close()
	c, err := dial(requestTimeout)
	if err != nil {
		t.Fatalf("after one connection closed, a new one failed: %v", err)
	}
	_ = c.Close()
	_ = held[1].Close()
}
