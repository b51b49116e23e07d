package main

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestOptionsRefuseBadPolicyAndEndpointValues(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Options)
		wantErr []string
	}{
		{name: "defaults_are_valid", change: func(*Options) {}},
		{name: "weight_1_and_disabled_endpoints_are_valid", change: func(o *Options) {
			o.Policy.Weight, o.MetricsBindAddress, o.HealthProbeBindAddress = 1, "0", "0"
		}},
		{name: "weight_0_is_refused", change: func(o *Options) { o.Policy.Weight = 0 }, wantErr: []string{"--affinity-weight must be between 1 and 100", "got 0"}},
		{name: "weight_101_is_refused", change: func(o *Options) { o.Policy.Weight = 101 }, wantErr: []string{"--affinity-weight must be between 1 and 100", "got 101"}},
		{name: "invalid_pool_label_key", change: func(o *Options) { o.Policy.PoolLabelKey = "not a key" }, wantErr: []string{`--pool-label-key "not a key" is not a valid label key`}},
		{name: "empty_worker_pool", change: func(o *Options) { o.Policy.WorkerPool = "" }, wantErr: []string{"--worker-pool must not be empty"}},
		{name: "invalid_worker_pool", change: func(o *Options) { o.Policy.WorkerPool = "a/b" }, wantErr: []string{`--worker-pool "a/b" is not a valid label value`}},
		{name: "empty_cert_dir", change: func(o *Options) { o.CertDir = "" }, wantErr: []string{"--cert-dir must not be empty"}},
		{name: "cert_name_outside_the_dir", change: func(o *Options) { o.CertName = "../tls.crt" }, wantErr: []string{`--cert-name must be a file name inside --cert-dir, got "../tls.crt"`}},
		{name: "absolute_key_name", change: func(o *Options) { o.KeyName = "/etc/tls.key" }, wantErr: []string{"--key-name must be a file name inside --cert-dir"}},
		{name: "service_dns_name_is_valid", change: func(o *Options) { o.CertDNSName = "snatch-webhook.kyma-system.svc" }},
		{name: "cert_dns_name_not_a_dns_name", change: func(o *Options) { o.CertDNSName = "snatch_webhook.kyma-system.svc" }, wantErr: []string{`--cert-dns-name "snatch_webhook.kyma-system.svc" is not a DNS name`}},
		{name: "webhook_port_0", change: func(o *Options) { o.WebhookPort = 0 }, wantErr: []string{"--webhook-port must be between 1 and 65535, got 0"}},
		{name: "metrics_address_without_port", change: func(o *Options) { o.MetricsBindAddress = "8080" }, wantErr: []string{`--metrics-bind-address "8080": want host:port, :port or 0`}},
		{name: "probe_address_with_a_bad_port", change: func(o *Options) { o.HealthProbeBindAddress = ":http" }, wantErr: []string{`--health-probe-bind-address ":http": port "http" is not a number from 0 to 65535`}},
		{name: "request_timeout_under_a_second", change: func(o *Options) { o.RequestTimeout = 500 * time.Millisecond }, wantErr: []string{"--request-timeout must be between 1s and 31s, got 500ms"}},
		{name: "request_timeout_past_the_api_servers_largest", change: func(o *Options) { o.RequestTimeout = time.Minute }, wantErr: []string{"--request-timeout must be between 1s and 31s, got 1m0s"}},
		{name: "in_flight_bytes_that_cannot_hold_the_largest_body", change: func(o *Options) { o.InFlightBodyBytes = 32 << 20 }, wantErr: []string{"--max-in-flight-body-bytes must be more than the largest body"}},
		{name: "no_connections", change: func(o *Options) { o.MaxConnections = 0 }, wantErr: []string{"--max-connections must be at least 1, got 0"}},
		{name: "every_problem_is_reported_at_once", change: func(o *Options) { o.Policy.Weight, o.WebhookPort = 0, 70000 }, wantErr: []string{"--affinity-weight", "--webhook-port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			tt.change(&o)
			cmdlinetest.MentionsEach(t, o.Validate(), tt.wantErr)
		})
	}
}
