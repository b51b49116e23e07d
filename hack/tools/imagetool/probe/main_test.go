package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbeReportsHowFarTheConnectionGot(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.NotFoundHandler())
	defer secure.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close()

	cases := []struct {
		name, kind, target string
		want               string // in the detail, or in the error if wantErr
		wantErr            bool
	}{
		{"tcp_connects", "tcp", plain.Listener.Addr().String(), "connected from 127.0.0.1:", false},
		{"tls_completes_the_handshake", "tls", secure.Listener.Addr().String(), "TLS TLS 1.3", false},
		{"tls_fails_on_plain_http", "tls", plain.Listener.Addr().String(), "", true},
		{"http_reports_the_status", "http", plain.URL + "/metrics", "HTTP 200, 7 bytes", false},
		{"https_reports_the_status_without_verifying", "http", secure.URL, "HTTP 404", false},
		{"closed_port_is_refused", "tcp", closedAddr, "connection refused", true},
		{"unknown_kind_is_an_error", "udp", closedAddr, "unknown kind", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			detail, err := probe(ctx, c.kind, c.target)
			if (err != nil) != c.wantErr {
				t.Fatalf("probe(%s, %s) = %q, %v; want error: %v", c.kind, c.target, detail, err, c.wantErr)
			}
			got := detail
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("probe(%s, %s) = %q, want it to contain %q", c.kind, c.target, got, c.want)
			}
		})
	}
}
