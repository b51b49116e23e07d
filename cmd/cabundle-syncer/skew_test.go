package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The releases of the skew test: the syncer N whose check runs, and the
// webhook one minor below and one minor above it (docs/releasing.md, "Skew
// between the two binaries").
const (
	skewSyncerVersion  = "v0.2.0"
	skewWebhookBelow   = "v0.1.0"
	skewWebhookAbove   = "v0.3.0"
	skewLaterMinorFlag = "--a-flag-of-a-later-minor=on"
	skewOtherPoolKey   = "example.com/pool"
)

// check of cabundle-syncer N, the built binary with its defaults, passes
// against snatch-webhook one minor below N and one above, each installed
// from its install.yaml as hack/release/release.sh renders it, and names the
// webhook's term and its --worker-pool as that release's Deployment sets
// them; and it fails, on admission, against a webhook whose Deployment
// sets another --pool-label-key, which check does not read from the
// webhook (docs/releasing.md, "What check reads of the webhook": a
// change of it is a major release).
//
// The releases: hack/release/release.sh --manifests renders a release of any
// version, from the bases of the work tree; it renders no other commit,
// and no release is tagged yet. So both webhook releases are this
// commit's deploy/webhook under their version's image, and what the test
// holds is that check finds the webhook's objects, labels, flags and term
// where the release tooling puts them, with nothing of it tied to a
// version. Two more steps play what a later release of the webhook may
// change: a flag that no release has, in front of --worker-pool, as a
// minor may add one; and another --pool-label-key, which only a major may
// change.
//
// The cluster: the control plane of test/framework, with kubectl apply
// --server-side of the syncer's install.yaml, then of the webhook below's
// and then above's, as an upgrade. What the control plane lacks the test
// plays as its owner would (skew_install_test.go): the Pods of each
// Deployment's template, Running and Ready on Nodes of the Kyma pool; the
// Secret of cert-management; the quota controller's first status; the
// EndpointSlices of the webhook's Service. The syncer is the built binary
// with the args of its Deployment, under its ServiceAccount, and writes
// the caBundle; check runs under the check's own ServiceAccount, of the
// syncer's release. The webhook is pkg/admission's handler of this commit,
// configured from the args of the webhook's Deployment: a term of another
// release's code is not here, and test/e2e runs the shipped images.
func TestSkewCheckOfASyncerPassesWebhooksOneMinorBelowAndAbove(t *testing.T) {
	binary(t) // skip early with -short, and build before the clock starts
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	rendered := renderReleases(t, kubectl, [2]string{"cabundle-syncer", skewSyncerVersion},
		[2]string{"snatch-webhook", skewWebhookBelow}, [2]string{"snatch-webhook", skewWebhookAbove})
	c := framework.Integration(t, framework.Options{AggregatorRouting: true},
		"installs the released manifests into kyma-system and serves the webhook on loopback, which an existing cluster cannot call")
	releases := rendered()
	syncerRelease, below, above := releases[0], releases[1], releases[2]
	rc := rest.CopyConfig(c.Config)
	rc.WarningHandler = rest.NoWarnings{} // FQDN EndpointSlices are deprecated
	s := &skewCluster{Cluster: c, cs: kubernetes.NewForConfigOrDie(rc)}
	webhookDeployment := below.deployment(t)
	s.prepare(t, webhookDeployment.Namespace)
	s.install(t, syncerRelease)
	s.install(t, below)
	s.settleQuotas(t)

	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	below.one(t, "MutatingWebhookConfiguration", &mwc)
	ca := s.certManagementSecret(t, below)
	webhook := serveWebhook(t, &mwc, ca)
	startReleasedSyncer(t, s, syncerRelease)
	if _, _, err := syncertest.WatchWebhookConfiguration(context.Background(), s.cs, mwc.Name, 30*time.Second,
		func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
			return syncertest.EveryBundleIs(m, ca.Fingerprint())
		}); err != nil {
		t.Fatalf("the syncer never wrote the CA into %s: %v", mwc.Name, err)
	}
	var job batchv1.CronJob
	syncerRelease.one(t, "CronJob", &job)
	checkKubeconfig := s.serviceAccountKubeconfig(t, job.Namespace, job.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName)

	steps := []struct {
		name    string
		release *release
		flag    bool // skewLaterMinorFlag first in the webhook's args
	}{
		{name: "webhook_" + skewWebhookBelow + "_passes", release: below},
		{name: "upgraded_to_webhook_" + skewWebhookAbove + "_passes", release: above},
		{name: "webhook_" + skewWebhookAbove + "_with_a_later_minors_flag_passes", release: above, flag: true},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			s.install(t, step.release)
			if step.flag {
				addFirstArg(t, s.cs, webhookDeployment, skewLaterMinorFlag)
			}
			policy, pods := rollWebhook(t, s, webhook, webhookDeployment, &mwc)
			assertSkewReport(t, checkKubeconfig, webhookDeployment.Namespace, policy, pods)
		})
	}
	// On the webhook of the last step, whose args the test changed.
	t.Run("webhook_with_another_pool_label_key_fails_admission", func(t *testing.T) {
		checkOtherPoolKeyFailsAdmission(t, s, webhook, webhookDeployment, &mwc, checkKubeconfig)
	})
}

// checkOtherPoolKeyFailsAdmission gives the webhook another
// --pool-label-key: check, which reads its own, fails admission
// (docs/releasing.md, "What check reads of the webhook").
func checkOtherPoolKeyFailsAdmission(t *testing.T, s *skewCluster, webhook *skewWebhook, webhookDeployment *appsv1.Deployment,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration, checkKubeconfig string) {
	t.Helper()
	setArg(t, s.cs, webhookDeployment, affinity.FlagPoolLabelKey, skewOtherPoolKey)
	policy, _ := rollWebhook(t, s, webhook, webhookDeployment, mwc)
	if policy.PoolLabelKey != skewOtherPoolKey {
		t.Fatalf("the webhook runs with --%s=%s, want %s", affinity.FlagPoolLabelKey, policy.PoolLabelKey, skewOtherPoolKey)
	}
	// The API server calls the webhook, which adds its term on the
	// other key: check's FAIL below is about the key, not about a
	// webhook it cannot reach.
	waitForTerm(t, s.cs, webhookDeployment.Namespace, policy.Term())
	code, r, stdout := runSkewCheck(t, checkKubeconfig, webhookDeployment.Namespace, func(_ int, r check.Report) bool {
		return skewResult(t, r, check.IDAdmission).Status == check.StatusFail
	})
	if code != check.ExitFail {
		t.Errorf("check exited %d, want %d:\n%s", code, check.ExitFail, stdout)
	}
	// check looks for the term on its own --pool-label-key, the
	// default, and the dry-run Pod carries the webhook's term on the
	// other key only.
	admission := skewResult(t, r, check.IDAdmission)
	if want := "without the term on " + affinity.DefaultPoolLabelKey; admission.Status != check.StatusFail ||
		!strings.Contains(admission.Message, want) {
		t.Errorf("%s = %s %q, want FAIL naming %q", check.IDAdmission, admission.Status, admission.Message, want)
	}
}

// startReleasedSyncer runs the built syncer with the args and environment
// of its release's Deployment, as the first of the Deployment's Pods,
// under the Deployment's ServiceAccount; only its addresses and its
// metrics' TLS are its own, on loopback.
func startReleasedSyncer(t *testing.T, s *skewCluster, r *release) {
	t.Helper()
	d := r.deployment(t)
	pods := s.rollPods(t, d)
	env, args := containerEnv(pods[0])
	kubeconfig := s.serviceAccountKubeconfig(t, d.Namespace, d.Spec.Template.Spec.ServiceAccountName)
	args = append(args, "--metrics-secure=false", "--kubeconfig="+kubeconfig)
	startSyncerEnv(t, pods[0].Name, env, args...)
}

// rollWebhook rolls the webhook's Deployment as applied out to new Pods,
// points its Service and the handler at them, and returns the policy of
// their args and the Pods.
func rollWebhook(t *testing.T, s *skewCluster, w *skewWebhook, rendered *appsv1.Deployment,
	mwc *admissionregistrationv1.MutatingWebhookConfiguration) (affinity.Policy, []*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	d, err := s.cs.AppsV1().Deployments(rendered.Namespace).Get(ctx, rendered.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := mwc.Webhooks[0].ClientConfig.Service
	svc, err := s.cs.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := s.rollPods(t, d)
	_, args := containerEnv(pods[0])
	policy := w.configure(t, args)
	s.publish(t, w, svc, pods)
	return policy, pods
}

// waitForTerm creates a Pod in namespace as a dry run, as the admin, until
// it comes back with term as its only preferred term; a failed create
// ends the wait.
func waitForTerm(t *testing.T, cs kubernetes.Interface, namespace string, term corev1.PreferredSchedulingTerm) {
	t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "skew-probe-", Namespace: namespace},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "registry.k8s.io/pause:3.10"}}},
	}
	poll.Eventually(t, fmt.Sprintf("a Pod created in %s to come back with only the term %+v", namespace, term),
		func(ctx context.Context) error {
			got, err := cs.CoreV1().Pods(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return poll.Stop(err)
			}
			var terms []corev1.PreferredSchedulingTerm
			if a := got.Spec.Affinity; a != nil && a.NodeAffinity != nil {
				terms = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
			}
			if len(terms) != 1 || !apiequality.Semantic.DeepEqual(terms[0], term) {
				return fmt.Errorf("it comes back with the preferred terms %+v", terms)
			}
			return nil
		})
}

// setArg sets the value of the flag name in the args of the Deployment's
// container, where the release writes it as --name=value.
func setArg(t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment, name, value string) {
	t.Helper()
	live, err := cs.AppsV1().Deployments(d.Namespace).Get(context.Background(), d.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(live.Spec.Template.Spec.Containers[0].Args, func(a string) bool {
		return strings.HasPrefix(a, "--"+name+"=")
	})
	if i < 0 {
		t.Fatalf("the Deployment %s sets no --%s", d.Name, name)
	}
	patch := fmt.Sprintf(`[{"op": "replace", "path": "/spec/template/spec/containers/0/args/%d", "value": %q}]`, i, "--"+name+"="+value)
	if _, err := cs.AppsV1().Deployments(d.Namespace).Patch(context.Background(), d.Name, types.JSONPatchType, []byte(patch),
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// addFirstArg puts arg in front of the args of the Deployment's container,
// as a release that adds a flag may.
func addFirstArg(t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment, arg string) {
	t.Helper()
	patch := fmt.Sprintf(`[{"op": "add", "path": "/spec/template/spec/containers/0/args/0", "value": %q}]`, arg)
	_, err := cs.AppsV1().Deployments(d.Namespace).Patch(context.Background(), d.Name, types.JSONPatchType, []byte(patch),
		metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// assertSkewReport runs check until it passes, or 30 s pass, with the
// namespace item for namespace, and wants every item to pass, admission to
// name the term of policy and kyma-pool its pool, each read from one of
// pods.
func assertSkewReport(t *testing.T, kubeconfig, namespace string, policy affinity.Policy, pods []*corev1.Pod) {
	t.Helper()
	code, r, stdout := settledCheck(t, kubeconfig, namespace)
	if code != check.ExitPass {
		t.Errorf("check exited %d, want %d:\n%s", code, check.ExitPass, stdout)
	}
	for _, item := range r.Checks {
		if item.Status != check.StatusPass {
			t.Errorf("%s = %s %q, want PASS (remediation %q)", item.ID, item.Status, item.Message, item.Remediation)
		}
	}
	term := policy.Term()
	e := term.Preference.MatchExpressions[0]
	wantTerm := fmt.Sprintf("%s %s %v (weight %d)", e.Key, e.Operator, e.Values, term.Weight)
	wantPool := "pool " + policy.WorkerPool + " (from Pod "
	for id, want := range map[string]string{check.IDAdmission: wantTerm, check.IDKymaPool: wantPool} {
		msg := skewResult(t, r, id).Message
		if !strings.Contains(msg, want) || !slices.ContainsFunc(pods, func(p *corev1.Pod) bool {
			return strings.Contains(msg, "from Pod "+p.Name)
		}) {
			t.Errorf("%s: %q, want %q read from a Pod of this release's template", id, msg, want)
		}
	}
}

// settledCheck runs check until it passes; see runSkewCheck.
func settledCheck(t *testing.T, kubeconfig, namespace string) (int, check.Report, string) {
	t.Helper()
	return runSkewCheck(t, kubeconfig, namespace, func(code int, _ check.Report) bool { return code == check.ExitPass })
}

// runSkewCheck runs check as operators do, its flags at their defaults
// but for the namespace item's --target-namespace, namespace, until done
// or poll's timeout passes, and returns the last run, which the caller
// judges: the API server learns of the caBundle, the endpoints and the
// RBAC from its informers, so the first runs after a change may not yet
// see them.
func runSkewCheck(t *testing.T, kubeconfig, namespace string, done func(int, check.Report) bool) (int, check.Report, string) {
	t.Helper()
	var code int
	var r check.Report
	var stdout string
	_ = poll.Until(t.Context(), "check to settle", func(context.Context) error {
		var stderr string
		code, stdout, stderr = runCheckBinary(t, "--kubeconfig="+kubeconfig, "--target-namespace="+namespace, "-o", "json")
		if stderr != "" {
			t.Errorf("stderr: %s", stderr)
		}
		if r = decodeReport(t, stdout); !done(code, r) {
			return fmt.Errorf("check exits %d", code)
		}
		return nil
	})
	return code, r, stdout
}

func skewResult(t *testing.T, r check.Report, id string) check.Result {
	t.Helper()
	for _, res := range r.Checks {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no item %s in the report", id)
	return check.Result{}
}
