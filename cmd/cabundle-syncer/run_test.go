package main

import (
	"crypto/tls"
	"testing"
)

func TestMetricsServerOptions(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(*Options)
		wantSecure bool
	}{
		{name: "defaults", mutate: func(*Options) {}, wantSecure: true},
		{name: "plain", mutate: func(o *Options) { o.MetricsSecure = false }},
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
