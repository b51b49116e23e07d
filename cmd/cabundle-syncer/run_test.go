package main

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
)

func TestMetricsAreSecureByDefaultAndOnlyOverHTTP1(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*Options)
		wantSecure bool
	}{
		{name: "defaults_serve_securely", mutate: func(*Options) {}, wantSecure: true},
		{name: "plain_serves_without_tls", mutate: func(o *Options) { o.MetricsSecure = false }},
		{name: "disabled_keeps_the_address", mutate: func(o *Options) { o.MetricsBindAddress = "0" }, wantSecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			tt.mutate(&o)
			got := metricsServerOptions(o)
			if got.BindAddress != o.MetricsBindAddress {
				t.Errorf("BindAddress = %q, want %q", got.BindAddress, o.MetricsBindAddress)
			}
			if got.SecureServing != tt.wantSecure {
				t.Errorf("SecureServing = %v, want %v", got.SecureServing, tt.wantSecure)
			}
			if (got.FilterProvider != nil) != tt.wantSecure {
				t.Errorf("FilterProvider set = %v, want %v: secure serving without authentication and authorization, or the reverse", got.FilterProvider != nil, tt.wantSecure)
			}
			// controller-runtime generates a certificate only when CertDir
			// holds none; the syncer mounts no certificate for metrics.
			if got.CertDir != "" {
				t.Errorf("CertDir = %q, want empty", got.CertDir)
			}
			if tt.wantSecure {
				cfg := &tls.Config{NextProtos: []string{"h2"}}
				for _, opt := range got.TLSOpts {
					opt(cfg)
				}
				if len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "http/1.1" {
					t.Errorf("NextProtos = %q, want only http/1.1", cfg.NextProtos)
				}
			}
		})
	}
}

func TestLeaderIdentityIsThePodNameAndUniquePerProcess(t *testing.T) {
	longName := strings.Repeat("cabundle-syncer-", 5) + "7d9f8c6b5-x2k4q"
	tests := []struct {
		name     string
		env      map[string]string
		hostname string
		hostErr  error
		wantName string
		wantErr  string
	}{
		{name: "pod_name_is_the_identity", env: map[string]string{"POD_NAME": "cabundle-syncer-7d9f8c6b5-x2k4q"}, hostname: "node-host", wantName: "cabundle-syncer-7d9f8c6b5-x2k4q"},
		{name: "pod_name_longer_than_a_hostname_is_the_identity", env: map[string]string{"POD_NAME": longName}, hostname: longName[:63], wantName: longName},
		{name: "hostname_is_the_identity_without_pod_name", hostname: "laptop", wantName: "laptop"},
		{name: "hostname_error_is_returned", hostErr: errors.New("no uts"), wantErr: "no uts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			hostname := func() (string, error) { return tt.hostname, tt.hostErr }
			id, err := leaderIdentity(getenv, hostname)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("leaderIdentity() = %q, %v; want an error containing %q", id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name, suffix, ok := cutLast(id, "_")
			if !ok || name != tt.wantName || suffix == "" {
				t.Errorf("leaderIdentity() = %q, want %q_<uuid>", id, tt.wantName)
			}
			again, _ := leaderIdentity(getenv, hostname)
			if again == id {
				t.Errorf("two identities are both %q; each process needs its own", id)
			}
		})
	}
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
