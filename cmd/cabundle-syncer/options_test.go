package main

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestOptionsAcceptGoodValuesAndNameEveryBadOne(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr []string
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "overlap_0", mutate: func(o *Options) { o.Syncer.Overlap = 0 }},
		{name: "negative_overlap", mutate: func(o *Options) { o.Syncer.Overlap = -time.Minute }, wantErr: []string{"CA overlap"}},
		{name: "bad_secret_name", mutate: func(o *Options) { o.Syncer.SecretName = "Bad_Name" }, wantErr: []string{"secret name"}},
		{name: "empty_webhook_configuration", mutate: func(o *Options) { o.Syncer.WebhookConfiguration = "" }, wantErr: []string{"webhook configuration"}},
		{name: "release_nothing", mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = nil }},
		{name: "release_an_empty_name", mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"snatch", ""} }, wantErr: []string{"a name is empty"}},
		{name: "release_the_own_manager", mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"cabundle-syncer"} }, wantErr: []string{"syncer's own field manager"}},
		{name: "bad_lease_namespace", mutate: func(o *Options) { o.LeaderElectionNamespace = "" }, wantErr: []string{"--leader-election-namespace"}},
		{name: "bad_lease_id", mutate: func(o *Options) { o.LeaderElectionID = "Lease ID" }, wantErr: []string{"--leader-election-id"}},
		{name: "lease_not_longer_than_renew", mutate: func(o *Options) { o.LeaseDuration = o.RenewDeadline }, wantErr: []string{"must be greater than --leader-election-renew-deadline"}},
		{name: "renew_too_close_to_retry", mutate: func(o *Options) { o.RenewDeadline, o.RetryPeriod = 2*time.Second, 2*time.Second }, wantErr: []string{"1.2 × --leader-election-retry-period"}},
		{name: "zero_retry", mutate: func(o *Options) { o.RetryPeriod = 0 }, wantErr: []string{"must be positive"}},
		{name: "short_timings_for_tests", mutate: func(o *Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond
		}},
		{name: "lease_checks_skipped_without_election", mutate: func(o *Options) {
			o.LeaderElect, o.LeaderElectionNamespace, o.RetryPeriod = false, "", 0
		}},
		{name: "metrics_disabled", mutate: func(o *Options) { o.MetricsBindAddress = "0" }},
		{name: "both_endpoints_disabled", mutate: func(o *Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0" }},
		{name: "plain_metrics", mutate: func(o *Options) { o.MetricsSecure = false }},
		{name: "secure_metrics_disabled", mutate: func(o *Options) { o.MetricsSecure, o.MetricsBindAddress = true, "0" }},
		{name: "metrics_on_loopback", mutate: func(o *Options) { o.MetricsBindAddress = "127.0.0.1:9090" }},
		{name: "metrics_without_port", mutate: func(o *Options) { o.MetricsBindAddress = "localhost" }, wantErr: []string{"--metrics-bind-address"}},
		{name: "probe_port_out_of_range", mutate: func(o *Options) { o.HealthProbeBindAddress = ":70000" }, wantErr: []string{"--health-probe-bind-address"}},
		{name: "empty_probe_address", mutate: func(o *Options) { o.HealthProbeBindAddress = "" }, wantErr: []string{"--health-probe-bind-address"}},
		{name: "same_address_twice", mutate: func(o *Options) { o.HealthProbeBindAddress = o.MetricsBindAddress }, wantErr: []string{"are both"}},
		{
			name: "every_error_reported",
			mutate: func(o *Options) {
				o.Syncer.CAKey, o.LeaderElectionID, o.MetricsBindAddress = "", "", "nope"
			},
			wantErr: []string{"CA key", "--leader-election-id", "--metrics-bind-address"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			tt.mutate(&o)
			cmdlinetest.MentionsEach(t, o.Validate(), tt.wantErr)
		})
	}
}
