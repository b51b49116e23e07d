package main

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// outcome is what a command line of the syncer did.
type outcome = cmdlinetest.Outcome

func TestCommandLineRunsTheSyncerOrExitsWithItsCode(t *testing.T) {
	checkCalled := func(ctx context.Context, args []string, stdout, _ io.Writer) error {
		_, err := io.WriteString(stdout, "check "+strings.Join(args, " "))
		return err
	}
	tests := []struct {
		name  string
		args  []string
		want  outcome
		check func(t *testing.T, o Options)
	}{
		{
			name: "defaults_run_the_syncer",
			args: nil,
			want: outcome{Ran: true},
			check: func(t *testing.T, o Options) {
				want := defaultOptions()
				if !reflect.DeepEqual(o.Syncer, want.Syncer) || !slices.Equal(o.Syncer.ReleaseFieldManagers, []string{"snatch"}) || o.LeaderElect != want.LeaderElect || o.LeaderElectionNamespace != "kyma-system" ||
					o.LeaseDuration != 15*time.Second || o.MetricsBindAddress != ":8080" || !o.MetricsSecure || o.HealthProbeBindAddress != ":8081" {
					t.Errorf("options = %+v, want the defaults %+v", o, want)
				}
			},
		},
		{
			name: "every_flag_is_bound",
			args: []string{
				"--secret-namespace=ns", "--secret-name=certs", "--ca-key=root.pem",
				"--webhook-configuration=hook", "--ca-overlap=90s", "--release-field-managers=snatch, manager-b", "--leader-elect=false",
				"--leader-election-namespace=le", "--leader-election-id=lock",
				"--leader-election-lease-duration=4s", "--leader-election-renew-deadline=3s", "--leader-election-retry-period=500ms",
				"--metrics-bind-address=0", "--metrics-secure=false", "--health-probe-bind-address=127.0.0.1:0",
				"--kubeconfig=/tmp/kc", "--zap-log-level=debug",
			},
			want: outcome{Ran: true},
			check: func(t *testing.T, o Options) {
				s := o.Syncer
				if s.SecretNamespace != "ns" || s.SecretName != "certs" || s.CAKey != "root.pem" || s.WebhookConfiguration != "hook" || s.Overlap != 90*time.Second ||
					!slices.Equal(s.ReleaseFieldManagers, []string{"snatch", "manager-b"}) {
					t.Errorf("syncer config = %+v", s)
				}
				if o.LeaderElect || o.LeaderElectionNamespace != "le" || o.LeaderElectionID != "lock" ||
					o.LeaseDuration != 4*time.Second || o.RenewDeadline != 3*time.Second || o.RetryPeriod != 500*time.Millisecond {
					t.Errorf("leader election = %v %q %q %s %s %s", o.LeaderElect, o.LeaderElectionNamespace, o.LeaderElectionID, o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
				}
				if o.MetricsBindAddress != "0" || o.MetricsSecure || o.HealthProbeBindAddress != "127.0.0.1:0" || o.Kubeconfig != "/tmp/kc" {
					t.Errorf("addresses, metrics security and kubeconfig = %q %v %q %q", o.MetricsBindAddress, o.MetricsSecure, o.HealthProbeBindAddress, o.Kubeconfig)
				}
				if o.Zap.Level == nil {
					t.Error("--zap-log-level was not bound")
				}
			},
		},
		{
			name: "release_no_field_manager_runs_releasing_none", args: []string{"--release-field-managers="}, want: outcome{Ran: true},
			check: func(t *testing.T, o Options) {
				if len(o.Syncer.ReleaseFieldManagers) != 0 {
					t.Errorf("field managers to release = %q, want none", o.Syncer.ReleaseFieldManagers)
				}
			},
		},
		{name: "release_an_empty_field_manager_exits_64", args: []string{"--release-field-managers=snatch,"}, want: outcome{Code: 64, Stderr: "a name is empty"}},
		{name: "release_the_own_field_manager_exits_64", args: []string{"--release-field-managers=cabundle-syncer"}, want: outcome{Code: 64, Stderr: "syncer's own field manager"}},
		{name: "help_shows_the_default_release", args: []string{"--help"}, want: outcome{Stderr: "(default snatch)"}},
		{name: "version_prints_the_version", args: []string{"--version"}, want: outcome{Stdout: version.String("cabundle-syncer") + "\n"}},
		{name: "version_skips_validation", args: []string{"--version", "--ca-overlap=-1s"}, want: outcome{Stdout: version.String("cabundle-syncer") + "\n"}},
		{name: "help_prints_the_usage", args: []string{"--help"}, want: outcome{Stderr: "Usage: cabundle-syncer [flags]"}},
		{name: "invalid_options_exit_64", args: []string{"--ca-overlap=-1s"}, want: outcome{Code: 64, Stderr: "CA overlap"}},
		{name: "non_boolean_metrics_secure_exits_64", args: []string{"--metrics-secure=maybe"}, want: outcome{Code: 64, Stderr: `invalid boolean value "maybe" for -metrics-secure`}},
		{name: "unknown_flag_exits_64", args: []string{"--overlap=1h"}, want: outcome{Code: 64, Stderr: "flag provided but not defined"}},
		{name: "unexpected_argument_exits_64", args: []string{"--ca-key=ca.crt", "extra"}, want: outcome{Code: 64, Stderr: "unexpected arguments"}},
		{name: "unknown_command_exits_64", args: []string{"chek"}, want: outcome{Code: 64, Stderr: `unknown command "chek"`}},
		{name: "subcommand_gets_its_arguments", args: []string{"check", "--strict", "x"}, want: outcome{Stdout: "check --strict x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ran := false
			c := &cli{
				stdout: &stdout,
				stderr: &stderr,
				runSyncer: func(_ context.Context, o Options) error {
					ran = true
					if tt.check != nil {
						tt.check(t, o)
					}
					return nil
				},
				runCheck: checkCalled,
			}
			err := c.execute(context.Background(), tt.args)
			code := cmdline.ExitCode(binaryName, err, &stderr)
			tt.want.Check(t, outcome{Ran: ran, Code: code, Stdout: stdout.String(), Stderr: stderr.String()})
		})
	}
}
