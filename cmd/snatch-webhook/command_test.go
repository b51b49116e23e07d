package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// testCLI returns a cli whose webhook run records its options instead of
// serving.
func testCLI(stdin string) (*cli, *bytes.Buffer, *bytes.Buffer, *[]Options) {
	var stdout, stderr bytes.Buffer
	var runs []Options
	c := &cli{
		stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr,
		runWebhook: func(_ context.Context, o Options) error { runs = append(runs, o); return nil },
	}
	return c, &stdout, &stderr, &runs
}

func TestCLIParsesTheWebhookFlags(t *testing.T) {
	c, _, _, runs := testCLI("")
	err := c.execute(context.Background(), []string{
		"--worker-pool=kyma-pool", "--pool-label-key=example.com/pool", "--affinity-weight=100",
		"--cert-dir=/certs", "--cert-name=crt", "--key-name=key", "--webhook-port=10250",
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:9000", "--enable-http2",
		"--zap-log-level=2",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(*runs) != 1 {
		t.Fatalf("the webhook ran %d times, want once", len(*runs))
	}
	o := (*runs)[0]
	want := affinity.Policy{PoolLabelKey: "example.com/pool", WorkerPool: "kyma-pool", Weight: 100}
	if o.Policy != want || o.CertDir != "/certs" || o.CertName != "crt" || o.KeyName != "key" || o.WebhookPort != 10250 ||
		o.MetricsBindAddress != "0" || o.HealthProbeBindAddress != "127.0.0.1:9000" || !o.EnableHTTP2 || o.Zap.Level == nil {
		t.Fatalf("parsed options %+v", o)
	}
}

// outcome is what a command line of the webhook did.
type outcome = cmdlinetest.Outcome

func TestCommandLineRunsTheWebhookOrExitsWithItsCode(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want outcome
	}{
		{name: "defaults_run_the_webhook", args: nil, want: outcome{Ran: true}},
		{name: "version_prints_and_does_not_run", args: []string{"--version"}, want: outcome{Stdout: version.String("snatch-webhook") + "\n"}},
		{name: "weight_0_is_a_usage_error", args: []string{"--affinity-weight=0"}, want: outcome{Code: 64, Stderr: "--affinity-weight must be between 1 and 100"}},
		{name: "weight_not_a_number_is_a_usage_error", args: []string{"--affinity-weight=ten"}, want: outcome{Code: 64, Stderr: `not an integer: "ten"`}},
		{name: "unknown_flag_exits_64", args: []string{"--nope"}, want: outcome{Code: 64, Stderr: "flag provided but not defined: -nope"}},
		{name: "unknown_command_exits_64", args: []string{"serve"}, want: outcome{Code: 64, Stderr: `unknown command "serve"`}},
		{name: "stray_argument_exits_64", args: []string{"--enable-http2", "extra"}, want: outcome{Code: 64, Stderr: "unexpected arguments"}},
		{name: "help_exits_0", args: []string{"--help"}, want: outcome{Stderr: "Usage: snatch-webhook"}},
		{name: "mutate_without_file_exits_64", args: []string{"mutate"}, want: outcome{Code: 64, Stderr: "-f is required"}},
		{name: "mutate_with_bad_weight_exits_64", args: []string{"mutate", "-f", "-", "--affinity-weight=101"}, want: outcome{Code: 64, Stderr: "got 101"}},
		{name: "mutate_of_a_missing_file_exits_1", args: []string{"mutate", "-f", "testdata/nope.yaml"}, want: outcome{Code: 1, Stderr: "no such file"}},
		{name: "mutate_of_a_deployment_exits_1", args: []string{"mutate", "-f", "testdata/deployment.yaml"}, want: outcome{Code: 1, Stderr: `the input is a "Deployment" of "apps/v1", want a v1 Pod`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, stdout, stderr, runs := testCLI("")
			err := c.execute(context.Background(), tt.args)
			code := cmdline.ExitCode(binaryName, err, stderr)
			tt.want.Check(t, outcome{Ran: len(*runs) == 1, Code: code, Stdout: stdout.String(), Stderr: stderr.String()})
			if tt.name == "help_exits_0" && !errors.Is(err, flag.ErrHelp) {
				t.Errorf("err = %v, want flag.ErrHelp", err)
			}
		})
	}
}

func TestMutatePrintsDecisionReasonAndPod(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		decision   string
		reason     affinity.Reason
		wantTerms  int
		wantWeight int32
	}{
		{name: "plain_pod_is_patched", args: []string{"-f", "../../pkg/affinity/testdata/no-affinity.yaml"}, decision: "patched", reason: affinity.ReasonInjected, wantTerms: 1, wantWeight: 10},
		{name: "policy_flags_are_honoured", args: []string{"-f", "../../pkg/affinity/testdata/no-affinity.yaml", "--affinity-weight=42"}, decision: "patched", reason: affinity.ReasonInjected, wantTerms: 1, wantWeight: 42},
		{name: "opted_out_pod_says_why", args: []string{"-f", "../../pkg/affinity/testdata/opt-out.yaml"}, decision: "unchanged", reason: affinity.ReasonOptedOut},
		{name: "node_selector_says_why", args: []string{"-f", "../../pkg/affinity/testdata/node-selector-pool.yaml"}, decision: "unchanged", reason: affinity.ReasonAlreadySet},
		{name: "bound_pod_says_why", args: []string{"-f", "../../pkg/affinity/testdata/bound.yaml"}, decision: "unchanged", reason: affinity.ReasonAlreadyScheduled},
		{name: "stdin_json_is_patched", args: []string{"-f", "-"}, stdin: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, decision: "patched", reason: affinity.ReasonInjected, wantTerms: 1, wantWeight: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, stdout, stderr, _ := testCLI(tt.stdin)
			if err := c.execute(context.Background(), append([]string{"mutate"}, tt.args...)); err != nil {
				t.Fatalf("mutate: %v\n%s", err, stderr)
			}
			out := stdout.String()
			for _, want := range []string{"# decision: " + tt.decision + "\n", "# reason: " + string(tt.reason) + "\n", "# detail: "} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			pod := &corev1.Pod{}
			if err := yaml.UnmarshalStrict([]byte(out), pod); err != nil {
				t.Fatalf("the output is not a Pod: %v\n%s", err, out)
			}
			var terms []corev1.PreferredSchedulingTerm
			if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				for _, term := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					if term.Preference.MatchExpressions[0].Key == affinity.DefaultPoolLabelKey && term.Preference.MatchExpressions[0].Values[0] == "cpu-worker-0" {
						terms = append(terms, term)
					}
				}
			}
			if tt.decision == "unchanged" {
				if len(terms) > 0 && tt.reason != affinity.ReasonAlreadySet {
					t.Errorf("unchanged Pod has our term: %+v", terms)
				}
				return
			}
			if len(terms) != tt.wantTerms || terms[0].Weight != tt.wantWeight {
				t.Fatalf("mutated Pod has terms %+v, want %d with weight %d", terms, tt.wantTerms, tt.wantWeight)
			}
		})
	}
}

func TestMutateJSONOutputIsPlainJSON(t *testing.T) {
	c, stdout, stderr, _ := testCLI("")
	if err := c.execute(context.Background(), []string{"mutate", "-o", "json", "-f", "../../pkg/affinity/testdata/no-affinity.yaml"}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(stdout.Bytes(), pod); err != nil {
		t.Fatalf("stdout is not a JSON Pod: %v\n%s", err, stdout)
	}
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		t.Fatalf("the Pod was not mutated: %s", stdout)
	}
	if !strings.Contains(stderr.String(), "# decision: patched") {
		t.Errorf("stderr lacks the decision: %q", stderr)
	}
}
