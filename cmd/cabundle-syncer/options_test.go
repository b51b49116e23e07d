package main

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestOptionsAcceptGoodValuesAndNameEveryBadOne(t *testing.T) {
	cmdlinetest.EachChange(t, defaultOptions, Options.Validate, []cmdlinetest.Change[Options]{
		{Name: "defaults_are_valid", Mutate: func(*Options) {}},
		{Name: "overlap_0_is_valid", Mutate: func(o *Options) { o.Syncer.Overlap = 0 }},
		{Name: "negative_overlap_is_refused", Mutate: func(o *Options) { o.Syncer.Overlap = -time.Minute }, WantErr: []string{"CA overlap"}},
		{Name: "bad_secret_name_is_refused", Mutate: func(o *Options) { o.Syncer.SecretName = "Bad_Name" }, WantErr: []string{"secret name"}},
		{Name: "empty_webhook_configuration_is_refused", Mutate: func(o *Options) { o.Syncer.WebhookConfiguration = "" }, WantErr: []string{"webhook configuration"}},
		{Name: "release_nothing_is_valid", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = nil }},
		{Name: "release_an_empty_name_is_refused", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"snatch", ""} }, WantErr: []string{"a name is empty"}},
		{Name: "release_the_own_manager_is_refused", Mutate: func(o *Options) { o.Syncer.ReleaseFieldManagers = []string{"cabundle-syncer"} }, WantErr: []string{"syncer's own field manager"}},
		{Name: "bad_lease_namespace_is_refused", Mutate: func(o *Options) { o.LeaderElectionNamespace = "" }, WantErr: []string{"--leader-election-namespace"}},
		{Name: "bad_lease_id_is_refused", Mutate: func(o *Options) { o.LeaderElectionID = "Lease ID" }, WantErr: []string{"--leader-election-id"}},
		{Name: "lease_not_longer_than_renew_is_refused", Mutate: func(o *Options) { o.LeaseDuration = o.RenewDeadline }, WantErr: []string{"must be greater than --leader-election-renew-deadline"}},
		{Name: "renew_too_close_to_retry_is_refused", Mutate: func(o *Options) { o.RenewDeadline, o.RetryPeriod = 2*time.Second, 2*time.Second }, WantErr: []string{"1.2 × --leader-election-retry-period"}},
		{Name: "zero_retry_is_refused", Mutate: func(o *Options) { o.RetryPeriod = 0 }, WantErr: []string{"must be positive"}},
		{Name: "short_timings_for_tests_are_valid", Mutate: func(o *Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 2*time.Second, 1500*time.Millisecond, 250*time.Millisecond
		}},
		{Name: "lease_checks_skipped_without_election", Mutate: func(o *Options) {
			o.LeaderElect, o.LeaderElectionNamespace, o.RetryPeriod = false, "", 0
		}},
		{Name: "metrics_disabled_is_valid", Mutate: func(o *Options) { o.MetricsBindAddress = "0" }},
		{Name: "both_endpoints_disabled_is_valid", Mutate: func(o *Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0" }},
		{Name: "plain_metrics_are_valid", Mutate: func(o *Options) { o.MetricsSecure = false }},
		{Name: "secure_metrics_disabled_is_valid", Mutate: func(o *Options) { o.MetricsSecure, o.MetricsBindAddress = true, "0" }},
		{Name: "metrics_on_loopback_are_valid", Mutate: func(o *Options) { o.MetricsBindAddress = "127.0.0.1:9090" }},
		{Name: "metrics_without_port_is_refused", Mutate: func(o *Options) { o.MetricsBindAddress = "localhost" }, WantErr: []string{"--metrics-bind-address"}},
		{Name: "probe_port_out_of_range_is_refused", Mutate: func(o *Options) { o.HealthProbeBindAddress = ":70000" }, WantErr: []string{"--health-probe-bind-address"}},
		{Name: "empty_probe_address_is_refused", Mutate: func(o *Options) { o.HealthProbeBindAddress = "" }, WantErr: []string{"--health-probe-bind-address"}},
		{Name: "same_address_twice_is_refused", Mutate: func(o *Options) { o.HealthProbeBindAddress = o.MetricsBindAddress }, WantErr: []string{"are both"}},
		{
			Name: "every_error_reported",
			Mutate: func(o *Options) {
				o.Syncer.CAKey, o.LeaderElectionID, o.MetricsBindAddress = "", "", "nope"
			},
			WantErr: []string{"CA key", "--leader-election-id", "--metrics-bind-address"},
		},
	})
}
