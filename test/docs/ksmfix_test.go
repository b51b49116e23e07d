package docs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/e2e/kubestatemetrics"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/runbook"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// ksmFixAlert is the alert whose Fix merges KIM Snatch's flags into a
// kube-state-metrics Deployment; the Prometheus section of
// docs/operations.md points to it.
const ksmFixAlert = "KimSnatchKubeStateMetricsLabelsAbsent"

// The flags the Fix merges, and the namespace placeholder it sets.
const (
	allowlistFlag = "--metric-labels-allowlist"
	optInFlag     = "--metric-opt-in-list"
	ksmNamespace  = "<ksm-namespace>"
)

// kubectlStub stands for kubectl in the Fix: get prints the Deployment in
// $KSM_DEPLOYMENT, patch writes its -p to $KSM_PATCH, and rollout status
// succeeds.
const kubectlStub = `#!/bin/sh
verb= patch=
while [ $# -gt 0 ]; do
	case $1 in
	-n) shift 2 ;;
	-p) patch=$2; shift 2 ;;
	get | patch | rollout) verb=${verb:-$1}; shift ;;
	*) shift ;;
	esac
done
case $verb in
get) cat "$KSM_DEPLOYMENT" ;;
patch) printf '%s' "$patch" >"$KSM_PATCH" ;;
rollout) ;;
*) echo "kubectl stub: unexpected call" >&2; exit 1 ;;
esac
`

// jqPath returns the jq that make test installs from Debian's packages at
// the Makefile's JQ_VERSION (SNATCH_JQ), or else the one on the PATH. A
// missing jq fails the test in CI and skips it elsewhere, as a missing tool
// of bin/ does (test/tools).
func jqPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SNATCH_JQ"); p != "" {
		return p
	}
	p, err := exec.LookPath("jq")
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%v; make test installs jq (hack/build/debian-package.sh jq <JQ_VERSION of the Makefile>)", err)
	if tools.InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// ksmFix runs the Fix of ksmFixAlert as written, with sh, jq and
// kubectlStub.
type ksmFix struct {
	block, stubs string
}

func newKSMFix(t *testing.T) ksmFix {
	t.Helper()
	rb, err := runbook.Parse(readDoc(t, "docs/operations.md").section(t, ksmFixAlert))
	block := strings.TrimSuffix(rb.Fix.Script, "\n")
	if err != nil {
		t.Fatalf("docs/operations.md, section %s: %v", ksmFixAlert, err)
	}
	if !strings.Contains(block, ksmNamespace) {
		t.Fatalf("the Fix of %s does not take the namespace as %s", ksmFixAlert, ksmNamespace)
	}
	stubs := t.TempDir()
	if err := os.WriteFile(filepath.Join(stubs, "kubectl"), []byte(kubectlStub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(jqPath(t), filepath.Join(stubs, "jq")); err != nil {
		t.Fatal(err)
	}
	return ksmFix{block: strings.ReplaceAll(block, ksmNamespace, "monitoring"), stubs: stubs}
}

// errNoPatch is the error of run where the Fix stopped before it patched.
var errNoPatch = errors.New("the Fix patched nothing")

// run runs the Fix against a Deployment with the containers given and
// returns the arguments its patch sets for the container
// kube-state-metrics, or errNoPatch; and what the Fix printed.
func (f ksmFix) run(t *testing.T, containers ...map[string]any) ([]string, process.Result, error) {
	t.Helper()
	dir := t.TempDir()
	deployment, patchFile := filepath.Join(dir, "deployment.json"), filepath.Join(dir, "patch.json")
	data, err := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "kube-state-metrics", "namespace": "monitoring"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(deployment, data, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + f.stubs + string(os.PathListSeparator) + os.Getenv("PATH"), "KSM_DEPLOYMENT=" + deployment, "KSM_PATCH=" + patchFile}
	res, runErr := process.Command{Dir: dir, Env: env}.Run(t.Context(), "sh", "-c", f.block)
	patch, err := os.ReadFile(patchFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, res, errors.Join(errNoPatch, runErr)
	}
	if err != nil || runErr != nil {
		t.Fatalf("the Fix: %v %v\n%s", runErr, err, res)
	}
	return patchedArgs(t, patch), res, nil
}

// patchedArgs returns the arguments that a strategic merge patch sets for
// the container kube-state-metrics, and fails where it sets anything else.
func patchedArgs(t *testing.T, patch []byte) []string {
	t.Helper()
	var p struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name string   `json:"name"`
						Args []string `json:"args"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatalf("the Fix's patch %s: %v", patch, err)
	}
	c := p.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Name != "kube-state-metrics" || c[0].Args == nil {
		t.Fatalf("the Fix's patch %s sets more or less than the args of the container kube-state-metrics", patch)
	}
	return c[0].Args
}

// container is the container kube-state-metrics with args, or without
// args where args is nil.
func container(args []string) map[string]any {
	c := map[string]any{"name": "kube-state-metrics", "image": "kube-state-metrics"}
	if args != nil {
		c["args"] = args
	}
	return c
}

// flagValues returns the values of flag and the other arguments of args,
// in their order; a value after = and one in the next argument alike.
func flagValues(args []string, flag string) (values, others []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case strings.HasPrefix(a, flag+"="):
			values = append(values, strings.TrimPrefix(a, flag+"="))
		case a == flag && i+1 < len(args):
			values = append(values, args[i+1])
			i++
		default:
			others = append(others, a)
		}
	}
	return values, others
}

// ksmCase is the arguments of a kube-state-metrics container before the
// Fix, and what of them must stay.
type ksmCase struct {
	name string
	args []string
	// keep holds the allowlist's entries that counted, keepOptIn the
	// metrics opted in, and others the other arguments, in their order.
	keep      map[string][]string
	keepOptIn []string
	others    []string
}

const (
	zoneLabel = "topology.kubernetes.io/zone"
	poolLabel = "worker.gardener.cloud/pool"
)

var ksmCases = []ksmCase{
	{name: "no_args_get_ours"},
	{name: "empty_args_get_ours", args: []string{}},
	{name: "flags_absent_are_added", args: []string{"--port=8080", "--resources=pods,nodes"}, others: []string{"--port=8080", "--resources=pods,nodes"}},
	{name: "other_entries_are_kept", args: []string{"--port=8080", allowlistFlag + "=pods=[app,team],deployments=[team]", optInFlag + "=kube_pod_tolerations"},
		keep: map[string][]string{"pods": {"app", "team"}, "deployments": {"team"}}, keepOptIn: []string{"kube_pod_tolerations"}, others: []string{"--port=8080"}},
	{name: "ours_already_are_held_once", args: []string{allowlistFlag + "=" + kubestatemetrics.LabelsAllowlist, optInFlag + "=" + kubestatemetrics.OptInMetrics},
		keep: ours(), keepOptIn: strings.Split(kubestatemetrics.OptInMetrics, ",")},
	{name: "one_of_ours_among_others_with_spaces_is_held_once", args: []string{allowlistFlag + "=nodes=[" + zoneLabel + ", " + poolLabel + "], pods=[app]"},
		keep: map[string][]string{"nodes": {zoneLabel, poolLabel}, "pods": {"app"}}},
	{name: "space_form_is_merged", args: []string{allowlistFlag, "pods=[app]", optInFlag, "kube_pod_tolerations", "--port=8080"},
		keep: map[string][]string{"pods": {"app"}}, keepOptIn: []string{"kube_pod_tolerations"}, others: []string{"--port=8080"}},
	{name: "repeated_flags_and_entries_the_last_counts", args: []string{allowlistFlag + "=pods=[lost]", allowlistFlag, "pods=[app],pods=[team]",
		optInFlag + "=kube_pod_tolerations", optInFlag, "kube_pod_status_reason," + kubestatemetrics.OptInMetrics},
		keep: map[string][]string{"pods": {"team"}}, keepOptIn: []string{"kube_pod_tolerations", "kube_pod_status_reason", kubestatemetrics.OptInMetrics}},
	{name: "every_label_of_a_resource_stays_first", args: []string{allowlistFlag + "=pods=[*],nodes=[" + zoneLabel + "]"},
		keep: map[string][]string{"pods": {"*"}, "nodes": {zoneLabel}}},
	{name: "a_resource_for_every_resource_takes_ours", args: []string{allowlistFlag + "=*=[team]"}, keep: map[string][]string{"*": {"team"}}},
	{name: "every_label_of_every_resource_stays_first", args: []string{allowlistFlag + "=*=[*]"}, keep: map[string][]string{"*": {"*"}}},
}

// ours is KIM Snatch's allowlist by resource.
func ours() map[string][]string {
	m, err := kubestatemetrics.ParseLabelsAllowlist(kubestatemetrics.LabelsAllowlist)
	if err != nil {
		panic(err)
	}
	return m
}

// The Fix of ksmFixAlert, run as written against a Deployment whose
// container kube-state-metrics has each case's arguments, next to a
// sidecar: its patch sets that container's arguments only, with one label
// allowlist that keeps every entry that counted and holds each of KIM
// Snatch's labels once, one opt-in list that keeps every metric and adds
// ours, and every other argument as it was. A second run sets the same.
func TestKubeStateMetricsFixMergesIntoTheArgumentsThatAreThere(t *testing.T) {
	fix := newKSMFix(t)
	sidecar := map[string]any{"name": "kube-rbac-proxy", "image": "kube-rbac-proxy", "args": []string{"--upstream=http://127.0.0.1:8081/"}}
	for _, c := range ksmCases {
		t.Run(c.name, func(t *testing.T) {
			got, out, err := fix.run(t, sidecar, container(c.args))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			checkMerged(t, c, got)
			again, out, err := fix.run(t, sidecar, container(got))
			if err != nil || !slices.Equal(again, got) {
				t.Errorf("a second run sets %q, want %q again: %v\n%s", again, got, err, out)
			}
		})
	}
}

// checkMerged checks the arguments the Fix set against what c must keep.
func checkMerged(t *testing.T, c ksmCase, got []string) {
	t.Helper()
	allow, others := flagValues(got, allowlistFlag)
	optIn, others := flagValues(others, optInFlag)
	if !slices.Equal(others, c.others) {
		t.Errorf("the other arguments are %q, want %q", others, c.others)
	}
	for flag, values := range map[string][]string{allowlistFlag: allow, optInFlag: optIn} {
		if len(values) != 1 || !slices.Contains(got, flag+"="+values[0]) {
			t.Fatalf("the arguments %q hold %s %d times, want once, with =", got, flag, len(values))
		}
	}
	entries, err := kubestatemetrics.ParseLabelsAllowlist(allow[0])
	if err != nil {
		t.Fatal(err)
	}
	checkAllowlist(t, c.keep, entries)
	checkOptIn(t, c.keepOptIn, optIn[0])
}

// checkAllowlist checks that got keeps every entry of keep, with a full
// wildcard still first, holds each of ours once where it counts (in the
// entry of the resource *, where there is one) unless that entry starts
// with the full wildcard, and holds nothing else.
func checkAllowlist(t *testing.T, keep, got map[string][]string) {
	t.Helper()
	target := func(resource string) string {
		if _, ok := keep["*"]; ok {
			return "*"
		}
		return resource
	}
	for resource, labels := range keep {
		for _, l := range labels {
			if !slices.Contains(got[resource], l) {
				t.Errorf("the allowlist %v lost %s of %s", got, l, resource)
			}
		}
		if len(labels) > 0 && labels[0] == "*" && (len(got[resource]) == 0 || got[resource][0] != "*") {
			t.Errorf("the allowlist %v no longer starts the entry of %s with *", got, resource)
		}
	}
	isOurs := map[string]bool{}
	for resource, labels := range ours() {
		r := target(resource)
		for _, l := range labels {
			isOurs[r+" "+l] = true
			if n := count(got[r], l); n != 1 && (len(got[r]) == 0 || got[r][0] != "*") {
				t.Errorf("the allowlist %v holds %s in the entry of %s %d times, want once", got, l, r, n)
			}
		}
	}
	for resource, labels := range got {
		for _, l := range labels {
			if count(labels, l) > 1 || !slices.Contains(keep[resource], l) && !isOurs[resource+" "+l] {
				t.Errorf("the allowlist %v holds %s of %s, which is neither ours nor kept, or twice", got, l, resource)
			}
		}
	}
}

// checkOptIn checks that got holds every metric of keep and ours, each
// once, and nothing else.
func checkOptIn(t *testing.T, keep []string, got string) {
	t.Helper()
	metrics := strings.Split(got, ",")
	want := slices.Concat(keep, strings.Split(kubestatemetrics.OptInMetrics, ","))
	for _, m := range metrics {
		if count(metrics, m) > 1 || !slices.Contains(want, m) {
			t.Errorf("the opt-in list %s holds %q twice or without reason", got, m)
		}
	}
	for _, m := range want {
		if !slices.Contains(metrics, m) {
			t.Errorf("the opt-in list %s lacks %s", got, m)
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, l := range list {
		if l == s {
			n++
		}
	}
	return n
}

// Where the Fix cannot merge, it stops with a message and patches nothing:
// a Deployment without the container, an allowlist it cannot read, one in
// the container's command, which its arguments could not replace, and a
// flag without its value.
func TestKubeStateMetricsFixRefusesWhatItCannotMergeAndPatchesNothing(t *testing.T) {
	fix := newKSMFix(t)
	for _, tt := range []struct {
		name      string
		container map[string]any
		says      string
	}{
		{name: "no_container_is_refused", container: map[string]any{"name": "kube-rbac-proxy", "args": []string{"--x"}}, says: "no container kube-state-metrics"},
		{name: "unreadable_allowlist_is_refused", container: container([]string{allowlistFlag + "=pods=app"}), says: "cannot read the label allowlist"},
		{name: "allowlist_in_command_is_refused", container: map[string]any{"name": "kube-state-metrics",
			"command": []string{"/kube-state-metrics", allowlistFlag + "=pods=[app]"}}, says: "from command to args"},
		{name: "flag_without_value_is_refused", container: container([]string{"--port=8080", allowlistFlag}), says: "has no value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, out, err := fix.run(t, tt.container)
			if !errors.Is(err, errNoPatch) {
				t.Fatalf("the Fix patched the arguments to %q", got)
			}
			if !strings.Contains(out.Stderr, tt.says) {
				t.Errorf("the Fix stops saying %q, want %q", out.Stderr, tt.says)
			}
		})
	}
}
