package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

// defaultCheckOptions returns the options with every flag at its default.
func defaultCheckOptions() checkOptions {
	var o checkOptions
	o.bindFlags(flag.NewFlagSet("check", flag.ContinueOnError))
	return o
}

// checkConfigErr is the error of the check's configuration from o.
func checkConfigErr(o checkOptions) error {
	_, err := o.config()
	return err
}

func TestCheckOptionsAcceptGoodFlagsAndNameEveryBadOne(t *testing.T) {
	cmdlinetest.EachChange(t, defaultCheckOptions, checkConfigErr, []cmdlinetest.Change[checkOptions]{
		{Name: "defaults_are_valid", Mutate: func(*checkOptions) {}},
		{Name: "lease_namespace_defaults_to_namespace", Mutate: func(o *checkOptions) { o.LeaderElectionNamespace = "" }},
		{Name: "target_namespace_is_valid", Mutate: func(o *checkOptions) { o.TargetNamespace = "istio-system" }},
		{Name: "set_based_selector_is_valid", Mutate: func(o *checkOptions) { o.WebhookSelectorText = "app.kubernetes.io/name in (snatch-webhook),tier!=test" }},
		{Name: "zero_min_validity_is_valid", Mutate: func(o *checkOptions) { o.MinCAValidity = 0 }},
		{Name: "json_output_is_valid", Mutate: func(o *checkOptions) { o.Output = "json" }},
		{Name: "bad_namespace_is_refused", Mutate: func(o *checkOptions) { o.Namespace = "Kyma_System" }, WantErr: []string{"--namespace"}},
		{Name: "bad_secret_name_is_refused", Mutate: func(o *checkOptions) { o.SecretName = "" }, WantErr: []string{"--secret-name"}},
		{Name: "bad_ca_key_is_refused", Mutate: func(o *checkOptions) { o.CAKey = "ca crt" }, WantErr: []string{"--ca-key"}},
		{Name: "bad_lease_namespace_is_refused", Mutate: func(o *checkOptions) { o.LeaderElectionNamespace = "-x" }, WantErr: []string{"--leader-election-namespace"}},
		{Name: "bad_target_namespace_is_refused", Mutate: func(o *checkOptions) { o.TargetNamespace = "a.b" }, WantErr: []string{"--target-namespace"}},
		{Name: "unparsable_selector_is_refused", Mutate: func(o *checkOptions) { o.WebhookSelectorText = "a in (" }, WantErr: []string{"--webhook-selector"}},
		{Name: "empty_selector_is_refused", Mutate: func(o *checkOptions) { o.WebhookSelectorText = "" }, WantErr: []string{"must not be empty"}},
		{Name: "zero_min_ready_is_refused", Mutate: func(o *checkOptions) { o.MinReadyWebhooks = 0 }, WantErr: []string{"--min-ready-webhooks"}},
		{Name: "negative_min_validity_is_refused", Mutate: func(o *checkOptions) { o.MinCAValidity = -time.Hour }, WantErr: []string{"--min-ca-validity"}},
		{Name: "yaml_output_is_refused", Mutate: func(o *checkOptions) { o.Output = "yaml" }, WantErr: []string{"--output"}},
		{Name: "zero_timeout_is_refused", Mutate: func(o *checkOptions) { o.Timeout = 0 }, WantErr: []string{"--timeout"}},
		{
			Name:    "every_error_reported",
			Mutate:  func(o *checkOptions) { o.WebhookConfiguration, o.MinReadyWebhooks, o.Timeout = "", -1, -time.Second },
			WantErr: []string{"--webhook-configuration", "--min-ready-webhooks", "--timeout"},
		},
	})
}

// checkCase is one command line of cabundle-syncer check against a fake
// cluster, healthy unless breakIt changes it.
type checkCase struct {
	name string
	args []string
	// breakIt changes the healthy cluster.
	breakIt    func(t *testing.T, cs kubernetes.Interface)
	connectErr error
	wantCode   int
	wantStdout []string
	wantStderr string
	// wantCluster is what connect must be called with.
	wantCluster   clusterFlags
	wantNoConnect bool
	// root: args are the binary's whole command line, not check's.
	root bool
}

const checkNamespace = "kyma-system"

func TestCheckReportsTheClusterAndExitsWithItsStatus(t *testing.T) {
	const ns = checkNamespace
	tests := []checkCase{
		{
			name:       "healthy_cluster_exits_0_with_a_table",
			wantCode:   0,
			wantStdout: []string{"ID", "STATUS", "MESSAGE", "webhook-pods", "syncer-lease", "ca-secret", "webhook-configuration", "ca-bundle", "Status: PASS"},
		},
		{
			name:       "healthy_cluster_exits_0_with_json",
			args:       []string{"-o", "json"},
			wantCode:   0,
			wantStdout: []string{`"status": "PASS"`},
		},
		{
			name: "failure_exits_2",
			args: []string{"--output=json"},
			breakIt: func(t *testing.T, cs kubernetes.Interface) {
				if err := cs.CoreV1().Secrets(ns).Delete(context.Background(), checktest.SecretName, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			wantCode:   2,
			wantStdout: []string{`"id": "ca-secret"`, `"status": "FAIL"`, `"status": "SKIP"`},
		},
		{
			name:       "warning_exits_1",
			args:       []string{"--min-ready-webhooks=3"},
			wantCode:   1,
			wantStdout: []string{"WARN", "→ One more disruption", "Status: WARN"},
		},
		{
			name:       "target_namespace_adds_a_check",
			args:       []string{"--target-namespace=" + ns},
			wantCode:   0,
			wantStdout: []string{"namespace ", "Pods created in kyma-system are sent to the webhook"},
		},
		{
			name:       "lease_namespace_follows_namespace",
			args:       []string{"--leader-election-id=other"},
			wantCode:   2,
			wantStdout: []string{"Lease kyma-system/other not found"},
		},
		{
			name:        "kubeconfig_is_passed_on",
			args:        []string{"--kubeconfig=/tmp/kc"},
			wantCode:    0,
			wantCluster: clusterFlags{Kubeconfig: "/tmp/kc"},
		},
		{
			name:     "kubectls_context_cluster_and_user_are_passed_on",
			args:     []string{"--context=prod", "--cluster=prod-cluster", "--user=operator"},
			wantCode: 0,
			wantCluster: clusterFlags{Overrides: clientcmd.ConfigOverrides{CurrentContext: "prod",
				Context: clientcmdapi.Context{Cluster: "prod-cluster", AuthInfo: "operator"}}},
		},
		{
			name:       "the_table_names_the_cluster",
			wantCode:   0,
			wantStdout: []string{"Cluster: context test-context, API server https://127.0.0.1:6443\nStatus: PASS\n"},
		},
		{
			name:       "the_json_names_the_cluster",
			args:       []string{"-o", "json"},
			wantCode:   0,
			wantStdout: []string{`"cluster": {`, `"context": "test-context"`, `"server": "https://127.0.0.1:6443"`},
		},
		{
			name: "skipped_item_exits_4",
			breakIt: func(t *testing.T, cs kubernetes.Interface) {
				cs.(*fake.Clientset).PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no RBAC"))
				})
			},
			wantCode:   4,
			wantStdout: []string{"kyma-pool", "SKIP", "Status: INCOMPLETE"},
		},
		{name: "no_cluster_exits_3", connectErr: errors.New("cannot reach the API server"), wantCode: 3, wantStderr: "cabundle-syncer: check: cannot reach the API server"},
		{name: "no_cluster_at_fail_on_fail_exits_3", args: []string{"--fail-on=fail"}, connectErr: errors.New("cannot reach the API server"), wantCode: 3,
			wantStderr: "cabundle-syncer: check: cannot reach the API server"},
	}
	now := time.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runCheckCase(t, tt, now) })
	}
}

// --fail-on moves only a WARN: at fail it exits 0 and still reports WARN;
// PASS, FAIL and INCOMPLETE exit as at warn, the default.
func TestCheckExitsAtTheFailOnThreshold(t *testing.T) {
	deleteSecret := func(t *testing.T, cs kubernetes.Interface) {
		if err := cs.CoreV1().Secrets(checkNamespace).Delete(context.Background(), checktest.SecretName, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	denyNodes := func(_ *testing.T, cs kubernetes.Interface) {
		cs.(*fake.Clientset).PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no RBAC"))
		})
	}
	const warn = "--min-ready-webhooks=3" // two ready webhook Pods: WARN
	tests := []checkCase{
		{name: "pass_at_warn_exits_0", args: []string{"--fail-on=warn"}, wantCode: 0, wantStdout: []string{"Status: PASS"}},
		{name: "pass_at_fail_exits_0", args: []string{"--fail-on=fail"}, wantCode: 0, wantStdout: []string{"Status: PASS"}},
		{name: "warn_by_default_exits_1", args: []string{warn}, wantCode: 1, wantStdout: []string{"Status: WARN"}},
		{name: "warn_at_warn_exits_1", args: []string{warn, "--fail-on=warn"}, wantCode: 1, wantStdout: []string{"Status: WARN"}},
		{name: "warn_at_fail_exits_0", args: []string{warn, "--fail-on", "fail"}, wantCode: 0,
			wantStdout: []string{"webhook-pods", "WARN", "→ One more disruption", "Status: WARN"}},
		{name: "warn_at_fail_in_json_exits_0", args: []string{warn, "--fail-on=fail", "-o", "json"}, wantCode: 0,
			wantStdout: []string{`"status": "WARN"`}},
		{name: "fail_at_warn_exits_2", args: []string{"--fail-on=warn"}, breakIt: deleteSecret, wantCode: 2, wantStdout: []string{"Status: FAIL"}},
		{name: "fail_at_fail_exits_2", args: []string{"--fail-on=fail"}, breakIt: deleteSecret, wantCode: 2, wantStdout: []string{"Status: FAIL"}},
		{name: "fail_beside_warn_at_fail_exits_2", args: []string{warn, "--fail-on=fail"}, breakIt: deleteSecret, wantCode: 2,
			wantStdout: []string{"WARN", "Status: FAIL"}},
		{name: "incomplete_at_fail_exits_4", args: []string{"--fail-on=fail"}, breakIt: denyNodes, wantCode: 4, wantStdout: []string{"Status: INCOMPLETE"}},
	}
	now := time.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runCheckCase(t, tt, now) })
	}
}

func TestCheckFailOnFlagParsesWarnAndFail(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want check.FailOn
	}{
		{name: "default_is_warn", want: check.FailOnWarn},
		{name: "warn_sets_warn", args: []string{"--fail-on=warn"}, want: check.FailOnWarn},
		{name: "fail_sets_fail", args: []string{"--fail-on=fail"}, want: check.FailOnFail},
		{name: "fail_as_a_separate_word_sets_fail", args: []string{"--fail-on", "fail"}, want: check.FailOnFail},
		{name: "single_dash_sets_fail", args: []string{"-fail-on=fail"}, want: check.FailOnFail},
		{name: "last_one_counts", args: []string{"--fail-on=fail", "--fail-on=warn"}, want: check.FailOnWarn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := failOnOf(t, tt.args); got != tt.want {
				t.Errorf("--fail-on = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckHelpAndUsageErrorsNeverReachTheCluster(t *testing.T) {
	tests := []checkCase{
		{name: "help_exits_0", args: []string{"-h"}, wantCode: 0, wantStderr: "Usage: cabundle-syncer check [flags]", wantNoConnect: true},
		{name: "help_lists_every_exit_code", args: []string{"-h"}, wantCode: 0, wantStderr: "  64  usage error:", wantNoConnect: true},
		{name: "unknown_flag_exits_64", args: []string{"--strict"}, wantCode: 64, wantStderr: "flag provided but not defined", wantNoConnect: true},
		{name: "argument_exits_64", args: []string{"extra"}, wantCode: 64, wantStderr: "unexpected arguments", wantNoConnect: true},
		{name: "invalid_option_exits_64", args: []string{"-o", "yaml"}, wantCode: 64, wantStderr: `-o/--output "yaml"`, wantNoConnect: true},
		{name: "unknown_fail_on_exits_64", args: []string{"--fail-on=error"}, wantCode: 64,
			wantStderr: `invalid value "error" for flag -fail-on: want warn or fail`, wantNoConnect: true},
		{name: "fail_on_in_upper_case_exits_64", args: []string{"--fail-on=WARN"}, wantCode: 64,
			wantStderr: `invalid value "WARN" for flag -fail-on: want warn or fail`, wantNoConnect: true},
		{name: "empty_fail_on_exits_64", args: []string{"--fail-on="}, wantCode: 64,
			wantStderr: `invalid value "" for flag -fail-on: want warn or fail`, wantNoConnect: true},
		{name: "fail_on_without_value_exits_64", args: []string{"--fail-on"}, wantCode: 64,
			wantStderr: "flag needs an argument: -fail-on", wantNoConnect: true},
		{name: "help_names_the_threshold", args: []string{"-h"}, wantCode: 0, wantStderr: "With --fail-on=fail, a WARN exits 0", wantNoConnect: true},
		// The whole command line, not only check's: a mistyped subcommand
		// is a usage error, never a FAIL.
		{name: "mistyped_subcommand_exits_64", args: []string{"chekc"}, root: true, wantCode: 64, wantStderr: `unknown command "chekc"`, wantNoConnect: true},
		{name: "root_help_lists_every_exit_code", args: []string{"-h"}, root: true, wantCode: 0,
			wantStderr: "exit 0 PASS, 1 WARN, 2 FAIL, 3 could not run, 4 INCOMPLETE, 64 usage error", wantNoConnect: true},
	}
	now := time.Now()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runCheckCase(t, tt, now) })
	}
}

// runCheckCase runs tt's command line against a healthy fake cluster that
// tt may break, and checks the exit code, the output and the report.
func runCheckCase(t *testing.T, tt checkCase, now time.Time) {
	in := checktest.Healthy(t, checkNamespace, checktest.WebhookConfiguration, now)
	cs := fake.NewClientset(in.Objects()...)
	checktest.Admit(cs)
	in.Authorize(cs)
	if tt.breakIt != nil {
		tt.breakIt(t, cs)
	}
	connected := false
	var stdout, stderr bytes.Buffer
	c := checkCLI(t, tt, cs, now, &connected, &stdout, &stderr)
	args := append([]string{"check"}, tt.args...)
	if tt.root {
		args = tt.args
	}
	err := c.execute(context.Background(), args)
	code := cmdline.ExitCode(binaryName, err, &stderr)
	if code != tt.wantCode {
		t.Errorf("exit code = %d, want %d (err %v)\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, err, stdout.String(), stderr.String())
	}
	if connected == tt.wantNoConnect {
		t.Errorf("connected = %v, want %v", connected, !tt.wantNoConnect)
	}
	checkOutput(t, tt, code, stdout.String(), stderr.String())
}

// checkCLI returns the binary's command line with check connecting to cs,
// after checking the cluster flags tt wants; it sets connected when check
// connects.
func checkCLI(t *testing.T, tt checkCase, cs kubernetes.Interface, now time.Time, connected *bool, stdout, stderr *bytes.Buffer) *cli {
	return &cli{
		stdout: stdout,
		stderr: stderr,
		runSyncer: func(context.Context, Options) error {
			t.Error("the syncer ran")
			return nil
		},
		runCheck: checkCommand{
			connect: func(_ context.Context, cluster clusterFlags, _ time.Duration) (kubernetes.Interface, check.Cluster, error) {
				*connected = true
				if !reflect.DeepEqual(cluster, tt.wantCluster) {
					t.Errorf("cluster flags = %+v, want %+v", cluster, tt.wantCluster)
				}
				if tt.connectErr != nil {
					return nil, check.Cluster{}, tt.connectErr
				}
				return cs, check.Cluster{Context: "test-context", Server: "https://127.0.0.1:6443"}, nil
			},
			now:       func() time.Time { return now },
			inCluster: func() bool { return false },
		}.run,
	}
}

// checkOutput checks that stdout holds the report tt wants, and stderr
// only what tt wants: the report is the output, and nothing is reported
// when the checks could not run.
func checkOutput(t *testing.T, tt checkCase, code int, stdout, stderr string) {
	t.Helper()
	for _, w := range tt.wantStdout {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout:\n%s\nwant it to contain %q", stdout, w)
		}
	}
	noReport := code == 3 || code == 64
	if tt.wantStderr == "" && !noReport && stderr != "" {
		t.Errorf("stderr = %q, want it empty: the report is the output", stderr)
	}
	if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
		t.Errorf("stderr = %q, want it to contain %q", stderr, tt.wantStderr)
	}
	if noReport && stdout != "" {
		t.Errorf("stdout = %q, want nothing when the checks could not run", stdout)
	}
	if strings.Contains(strings.Join(tt.args, " "), "json") && !noReport {
		var r check.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout)
		}
		if want := r.ExitCodeAt(failOnOf(t, tt.args)); want != code {
			t.Errorf("JSON status %s, exit code %d, want %d", r.Status, code, want)
		}
	}
}

// failOnOf returns the --fail-on that args name, or its default.
func failOnOf(t *testing.T, args []string) check.FailOn {
	t.Helper()
	var o checkOptions
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	o.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o.FailOn
}
