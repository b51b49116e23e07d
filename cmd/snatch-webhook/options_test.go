package main

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestOptionsRefuseBadPolicyAndEndpointValues(t *testing.T) {
	cmdlinetest.EachChange(t, defaultOptions, Options.Validate, []cmdlinetest.Change[Options]{
		{Name: "defaults_are_valid", Mutate: func(*Options) {}},
		{Name: "weight_1_and_disabled_endpoints_are_valid", Mutate: func(o *Options) {
			o.Policy.Weight, o.MetricsBindAddress, o.HealthProbeBindAddress = 1, "0", "0"
		}},
		{Name: "weight_0_is_refused", Mutate: func(o *Options) { o.Policy.Weight = 0 }, WantErr: []string{"--affinity-weight must be between 1 and 100", "got 0"}},
		{Name: "weight_101_is_refused", Mutate: func(o *Options) { o.Policy.Weight = 101 }, WantErr: []string{"--affinity-weight must be between 1 and 100", "got 101"}},
		{Name: "invalid_pool_label_key_is_refused", Mutate: func(o *Options) { o.Policy.PoolLabelKey = "not a key" }, WantErr: []string{`--pool-label-key "not a key" is not a valid label key`}},
		{Name: "empty_worker_pool_is_refused", Mutate: func(o *Options) { o.Policy.WorkerPool = "" }, WantErr: []string{"--worker-pool must not be empty"}},
		{Name: "invalid_worker_pool_is_refused", Mutate: func(o *Options) { o.Policy.WorkerPool = "a/b" }, WantErr: []string{`--worker-pool "a/b" is not a valid label value`}},
		{Name: "empty_cert_dir_is_refused", Mutate: func(o *Options) { o.CertDir = "" }, WantErr: []string{"--cert-dir must not be empty"}},
		{Name: "cert_name_outside_the_dir_is_refused", Mutate: func(o *Options) { o.CertName = "../tls.crt" }, WantErr: []string{`--cert-name must be a file name inside --cert-dir, got "../tls.crt"`}},
		{Name: "absolute_key_name_is_refused", Mutate: func(o *Options) { o.KeyName = "/etc/tls.key" }, WantErr: []string{"--key-name must be a file name inside --cert-dir"}},
		{Name: "service_dns_name_is_valid", Mutate: func(o *Options) { o.CertDNSName = "snatch-webhook.kyma-system.svc" }},
		{Name: "cert_dns_name_not_a_dns_name_is_refused", Mutate: func(o *Options) { o.CertDNSName = "snatch_webhook.kyma-system.svc" }, WantErr: []string{`--cert-dns-name "snatch_webhook.kyma-system.svc" is not a DNS name`}},
		{Name: "webhook_port_0_is_refused", Mutate: func(o *Options) { o.WebhookPort = 0 }, WantErr: []string{"--webhook-port must be between 1 and 65535, got 0"}},
		{Name: "metrics_address_without_port_is_refused", Mutate: func(o *Options) { o.MetricsBindAddress = "8080" }, WantErr: []string{`--metrics-bind-address "8080": want host:port, :port or 0`}},
		{Name: "probe_address_with_a_bad_port_is_refused", Mutate: func(o *Options) { o.HealthProbeBindAddress = ":http" }, WantErr: []string{`--health-probe-bind-address ":http": port "http" is not a number from 0 to 65535`}},
		{Name: "request_timeout_under_a_second_is_refused", Mutate: func(o *Options) { o.RequestTimeout = 500 * time.Millisecond }, WantErr: []string{"--request-timeout must be between 1s and 31s, got 500ms"}},
		{Name: "request_timeout_past_the_api_servers_largest_is_refused", Mutate: func(o *Options) { o.RequestTimeout = time.Minute }, WantErr: []string{"--request-timeout must be between 1s and 31s, got 1m0s"}},
		{Name: "in_flight_bytes_that_cannot_hold_the_largest_body_are_refused", Mutate: func(o *Options) { o.InFlightBodyBytes = 32 << 20 }, WantErr: []string{"--max-in-flight-body-bytes must be more than the largest body"}},
		{Name: "zero_max_connections_is_refused", Mutate: func(o *Options) { o.MaxConnections = 0 }, WantErr: []string{"--max-connections must be at least 1, got 0"}},
		{Name: "every_problem_is_reported_at_once", Mutate: func(o *Options) { o.Policy.Weight, o.WebhookPort = 0, 70000 }, WantErr: []string{"--affinity-weight", "--webhook-port"}},
	})
}
