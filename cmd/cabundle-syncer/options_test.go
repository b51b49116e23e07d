package main

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestOptionsAcceptGoodValuesAndNameEveryBadOne(t *testing.T) {
	cmdlinetest.EachChange(t, defaultOptions, Options.Validate, []cmdlinetest.Change[Options]{
		{Name: "defaults", Mutate: func(*Options) {}},
		{Name: "overlap_0", Mutate: func(o *Options) { o.Syncer.Overlap = 0 }},
		{Name: "negative_overlap", Mutate: func(o *Options) { o.Syncer.Overlap = -time.Minute }, WantErr: []string{"CA overlap"}},
		{Name: "bad_secret_name", Mutate: func(o *Options) { o.Syncer.SecretName = "Bad_Name" }, WantErr: []string{"secret name"}},
		{Name: "empty_webhook_configuration", Mutate: func(o *Options) { o.Syncer.WebhookConfiguration = "" }, WantErr: []string{"webhook configuration"}},
		{Name: "release_nothing", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = nil }},
		{Name: "release_an_empty_name", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"snatch", ""} }, WantErr: []string{"a name is empty"}},
		{Name: "release_the_own_manager", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"cabundle-syncer"} }, WantErr: []string{"syncer's own field manager"}},
		{Name: "bad_lease_namespace", Mutate: func(o *Options) { o.LeaderElectionNamespace = "" }, WantErr: []string{"--leader-election-namespace"}},
		{Name: "bad_lease_id", Mutate: func(o *Options) { o.LeaderElectionID = "Lease ID" }, WantErr: []string{"--leader-election-id"}},
		{Name: "lease_not_longer_than_renew", Mutate: func(o *Options) { o.LeaseDuration = o.RenewDeadline }, WantErr: []string{"must be greater than --leader-election-renew-deadline"}},
		{Name: "renew_too_close_to_retry", Mutate: func(o *Options) { o.RenewDeadline, o.RetryPeriod = 2*time.Second, 2*time.Second }, WantErr: []string{"1.2 × --leader-election-retry-period"}},
		{Name: "zero_retry", Mutate: func(o *Options) { o.RetryPeriod = 0 }, WantErr: []string{"must be positive"}},
		{Name: "short_timings_for_tests", Mutate: func(o *Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond
		}},
		{Name: "lease_checks_skipped_without_election", Mutate: func(o *Options) {
			o.LeaderElect, o.LeaderElectionNamespace, o.RetryPeriod = false, "", 0
		}},
		{Name: "metrics_disabled", Mutate: func(o *Options) { o.MetricsBindAddress = "0" }},
		{Name: "both_endpoints_disabled", Mutate: func(o *Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0" }},
		{Name: "plain_metrics", Mutate: func(o *Options) { o.MetricsSecure = false }},
		{Name: "secure_metrics_disabled", Mutate: func(o *Options) { o.MetricsSecure, o.MetricsBindAddress = true, "0" }},
		{Name: "metrics_on_loopback", Mutate: func(o *Options) { o.MetricsBindAddress = "127.0.0.1:9090" }},
		{Name: "metrics_without_port", Mutate: func(o *Options) { o.MetricsBindAddress = "localhost" }, WantErr: []string{"--metrics-bind-address"}},
		{Name: "probe_port_out_of_range", Mutate: func(o *Options) { o.HealthProbeBindAddress = ":70000" }, WantErr: []string{"--health-probe-bind-address"}},
		{Name: "empty_probe_address", Mutate: func(o *Options) { o.HealthProbeBindAddress = "" }, WantErr: []string{"--health-probe-bind-address"}},
		{Name: "same_address_twice", Mutate: func(o *Options) { o.HealthProbeBindAddress = o.MetricsBindAddress }, WantErr: []string{"are both"}},
		{
			Name: "every_error_reported",
			Mutate: func(o *Options) {
				o.Syncer.CAKey, o.LeaderElectionID, o.MetricsBindAddress = "", "", "nope"
			},
			WantErr: []string{"CA key", "--leader-election-id", "--metrics-bind-address"},
		},
	})
}
