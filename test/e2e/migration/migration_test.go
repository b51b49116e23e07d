package migration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/realnode"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The names both installations share are the stack's; the old entry is
// the old installation's.
const (
	namespace     = stack.Namespace
	loadNamespace = "kyma-load"
	mwcName       = stack.WebhookConfigName
	secretName    = stack.SecretName
	oldEntry      = kimsnatch.WebhookEntryName
	newEntry      = stack.WebhookEntryName
	// podsPerSecond is the rate of Pod creations throughout.
	podsPerSecond = 20
)

// windows are the phases, by the step they end with, in which the guide
// says Pods may miss the term, and why: each of them is counted (fail-open
// rise = Pods missed). Rollback step 6 makes the old Certificate issue a
// new certificate, and the old binary loads it once the kubelet has
// projected it: during step 7 or after ("rolled back").
var windows = map[string]string{
	"Rolling back 6": oldRotation,
	"Rolling back 7": oldRotation,
	"rolled back":    oldRotation,
}

const oldRotation = "kim-snatch's own rotation: it serves the new certificate and writes its CA alone into the caBundle"

// runs are the migrations the scenario makes, one after another: it stops
// after a step and rolls back from there, and at last migrates completely
// (upTo 0) and rolls back. The smoke tier makes the whole migration and
// its rollback; the aborts are in the full tier.
var runs = []struct {
	name string
	upTo int
	tier framework.Tier
}{
	{"abort after 3", 3, framework.Full},
	{"abort after 4", 4, framework.Full},
	{"abort after 5", 5, framework.Full},
	{"migration", 0, framework.Smoke},
}

// The migration from the old kim-snatch to KIM Snatch and the rollback,
// run as docs/migration.md writes them on a real node while Pods are
// created at 20/s, first stopped after steps 3, 4 and 5 and rolled back
// from there, then whole. Every Pod gets exactly one term, except in a
// window that the guide names, where the Pods missed equal the API
// server's fail-open count; after the migration no object of the old
// installation is left but the shared ones and the data the old manifest's
// CRDs hold, after each rollback none of the new, and at each end exactly
// one Certificate writes the Secret.
func TestMigrationAndRollbackUnderLoadMissPodsOnlyInTheGuidesWindows(t *testing.T) {
	framework.InTier(t, framework.Smoke, "the migration there and back; its aborts are in the full tier")
	framework.Alone(t, "it migrates from kim-snatch and back on its own cluster")
	ctx, env, steps := startScenario(t, 60*time.Minute, false)
	old := env.installOld(ctx, t)
	l := env.startLoad(ctx, t)

	tier, err := framework.RunTier()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !tier.Runs(r.tier) {
			t.Logf("%s: in the %s tier (make e2e)", r.name, r.tier)
			continue
		}
		env.migrateAndRollBack(ctx, t, l, steps, r.name, r.upTo, old)
	}
	l.finish()

	checkLoadReport(t, env, l)
}

// startScenario skips t without a real node (and fails it in CI), and
// otherwise starts the cluster and the workspace of e, with the guide's
// steps read, under a context that ends after timeout or with t. With
// monitored, the cluster runs the Prometheus stack of
// test/e2e/neighbours/monitoring too.
func startScenario(t *testing.T, timeout time.Duration, monitored bool) (context.Context, *env, []step) {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	if err := realnode.CheckPrerequisites(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no real node here: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readGuide(filepath.Join(root, "docs", "migration.md"), "Steps", "Rolling back")
	if err != nil {
		t.Fatal(err)
	}
	return ctx, newEnv(ctx, t, root, steps, monitored), steps
}

// startLoad starts creating Pods at podsPerSecond, the first 5 seconds in
// the phase "before", and stops when t ends.
func (e *env) startLoad(ctx context.Context, t *testing.T) *load {
	t.Helper()
	l := newLoad(e.load, loadNamespace, podsPerSecond)
	l.setPhase("before")
	l.start(ctx)
	t.Cleanup(l.finish)
	e.phase(ctx, t, l, "before", func() error { return e.hold(ctx, 5*time.Second) })
	return l
}

// installOld installs the old installation, as it runs in the fleet,
// serving Pods, with data in its CRDs, and returns that data.
func (e *env) installOld(ctx context.Context, t *testing.T) data {
	t.Helper()
	e.progress("installing the old kim-snatch")
	if _, err := e.kubectl(ctx, nil, "apply", "-f", e.oldManifest); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubectl(ctx, nil, "-n", namespace, "rollout", "status", "deployment/kim-snatch-controller-manager", "--timeout=5m"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubectl(ctx, nil, "wait", "--for=condition=Established", "crd/customconfigs.core.kyma-project.io", "crd/registrycacheconfigs.core.kyma-project.io"); err != nil {
		t.Fatal(err)
	}
	d := e.createData(ctx, t, filepath.Join("testdata", "data.yaml"))
	e.waitServed(ctx, t)
	return d
}

// migrateAndRollBack runs the guide's steps up to step upTo (0: all of
// them) and then its rollback, each step as a phase of l, and checks the
// installation after the migration, before step 6, and after the rollback.
func (e *env) migrateAndRollBack(ctx context.Context, t *testing.T, l *load, steps []step, name string, upTo int, d data) {
	t.Helper()
	e.progress("--- %s", name)
	for _, st := range steps {
		if st.section == "Steps" && upTo > 0 && st.n > upTo {
			continue
		}
		if st.section == "Rolling back" && st.n == 1 && upTo == 0 {
			e.checkMigrated(ctx, t)
			e.checkData(ctx, t, d, "after the migration")
			// The rotation of step 7 reaches the webhook's replicas under load.
			e.phase(ctx, t, l, name+": migrated", func() error { return e.measure(ctx, "webhook replicas after step 7", newPods) })
		}
		if st.section == "Steps" && st.n == 6 {
			e.checkOldReleased(ctx, t)
		}
		e.phase(ctx, t, l, fmt.Sprintf("%s: %s %d", name, st.section, st.n), func() error { return e.run(ctx, t, st) })
	}
	// The old binary's rotation of rollback step 6 reaches its Pod.
	e.phase(ctx, t, l, name+": rolled back", func() error { return e.measure(ctx, "old binary after rollback step 6", oldPods) })
	e.checkRolledBack(ctx, t)
	e.checkData(ctx, t, d, "after "+name+" and its rollback")
}

// checkLoadReport logs the Pods of each phase and checks that no Pod got
// two terms, that Pods missed the term only in a window, as many as the
// fail-open count rose, and that the load ran long enough to show it.
func checkLoadReport(t *testing.T, e *env, l *load) {
	t.Helper()
	phases, byPhase, errs := l.report()
	var total counts
	t.Logf("%-34s %6s %6s %7s %6s %9s", "phase", "Pods", "1 term", "2 terms", "none", "fail-open")
	for _, p := range phases {
		c := byPhase[p]
		t.Logf("%-34s %6d %6d %7d %6d %9.0f", p, c.Pods, c.OneTerm, c.TwoTerms, c.NoTerm, c.FailOpen)
		total.add(c)
		if c.TwoTerms > 0 {
			t.Errorf("%s: %d Pods got two terms", p, c.TwoTerms)
		}
		if !inWindow(p) && (c.NoTerm > 0 || c.FailOpen > 0) {
			t.Errorf("%s: %s; want none without the term and no fail-open", p, c)
		}
	}
	t.Logf("total: %s", total)
	if total.NoTerm > 0 || total.FailOpen > 0 {
		e.logFailOpenCalls(t)
	}
	for _, m := range e.projections {
		t.Logf("Secret written, then served by the Pods: %s", m)
	}
	for _, err := range errs {
		t.Error(err)
	}
	// Every fail-open call is a Pod admitted without the term; the load's
	// Pods are the only ones created in the windows.
	if float64(total.NoTerm) != total.FailOpen {
		t.Errorf("%d Pods without the term, but fail-open rose by %.0f", total.NoTerm, total.FailOpen)
	}
	if total.Pods < podsPerSecond*60 {
		t.Errorf("only %d Pods were created; the scenario ran too short to show anything", total.Pods)
	}
}

// inWindow reports whether phase is one of the windows.
func inWindow(phase string) bool {
	for w := range windows {
		if strings.HasSuffix(phase, w) {
			return true
		}
	}
	return false
}

// env is the cluster on the real node, and a workspace that holds what the
// guide's commands read: a copy of deploy/, the release files and the old
// manifest.
type env struct {
	t           *testing.T
	cluster     *realnode.Cluster
	client      kubernetes.Interface
	load        kubernetes.Interface
	dyn         dynamic.Interface
	workspace   string
	path        string // PATH for the guide: kubectl first
	oldManifest string
	start       time.Time
	// projections are the measured delays from a Secret write to the
	// certificate served by running Pods.
	projections []string
	// checks counts the check Jobs the scenario created, which it names by.
	checks int
}

func newEnv(ctx context.Context, t *testing.T, root string, steps []step, monitored bool) *env {
	e := &env{t: t, start: time.Now(), workspace: t.TempDir()}
	// The node runs the old kim-snatch's stand-in and KIM Snatch's images;
	// the load's Pods are never scheduled, and the node's taint would keep
	// them off it anyway.
	images := append([]string{"kim-snatch.tar", "snatch-webhook.tar", "cabundle-syncer.tar"}, stack.NeighbourImages...)
	if monitored {
		images = append(images, stack.MonitoringImages...)
	}
	cluster, err := realnode.StartCluster(ctx, realnode.ClusterOptions{
		Images:    images,
		KymaNodes: 3, CustomerNodes: 1,
		Progress: e.progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})
	e.cluster, e.client = cluster, cluster.Clientset
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = 200, 400
	if e.load, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{namespace, loadNamespace} {
		if err := stack.CreateNamespace(ctx, e.client, ns, true); err != nil {
			t.Fatal(err)
		}
	}
	kubectlBin, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	e.path = filepath.Dir(kubectlBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	if err := e.prepareWorkspace(ctx, root, steps); err != nil {
		t.Fatal(err)
	}

	e.installNeighbours(ctx, t, monitored)
	return e
}

// installNeighbours installs what a Kyma cluster provides: the CRDs of
// cert-management and of the Prometheus operator, Gardener
// cert-management itself and its Issuer "kyma", and with monitored the
// Prometheus stack.
func (e *env) installNeighbours(ctx context.Context, t *testing.T, monitored bool) {
	t.Helper()
	if err := stack.InstallNeighbours(ctx, e.cluster.KubeconfigPath); err != nil {
		t.Fatal(err)
	}
	if monitored {
		e.progress("installing the Prometheus stack")
		if err := stack.InstallMonitoring(ctx, e.cluster.KubeconfigPath); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if e.dyn, err = dynamic.NewForConfig(e.cluster.Config); err != nil {
		t.Fatal(err)
	}
	issuer := []byte("apiVersion: cert.gardener.cloud/v1alpha1\nkind: Issuer\nmetadata:\n  name: kyma\n  namespace: kyma-system\nspec:\n  selfSigned: {}\n")
	if _, err := e.kubectl(ctx, issuer, "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
}

// measure waits until the Pods of selector serve the Secret's certificate
// and records how long after the Secret's write that was.
func (e *env) measure(ctx context.Context, what, selector string) error {
	d, err := e.waitServing(ctx, selector)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	e.projections = append(e.projections, fmt.Sprintf("%s: %.0f s", what, d.Seconds()))
	e.progress("%s serve the Secret's certificate %.0f s after its write", what, d.Seconds())
	return nil
}

func (e *env) progress(format string, args ...any) {
	e.t.Logf("[%5.1fs] "+format, append([]any{time.Since(e.start).Seconds()}, args...)...)
}

func (e *env) kubectl(ctx context.Context, stdin []byte, args ...string) (string, error) {
	return framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: e.cluster.KubeconfigPath, Dir: e.workspace, Stdin: stdin}, args...)
}

// run runs a step's commands with bash, in the workspace, as an operator
// with an admin kubeconfig would.
func (e *env) run(ctx context.Context, t *testing.T, st step) error {
	e.progress("%s", st)
	if st.script == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", st.script)
	cmd.Dir = e.workspace
	cmd.Env = append(append(os.Environ(), guideEnv()...), "KUBECONFIG="+e.cluster.KubeconfigPath, "PATH="+e.path)
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Logf("    %s", line)
	}
	if err != nil {
		e.diagnose(ctx, t)
		return fmt.Errorf("%s: %w", st, err)
	}
	return nil
}

// diagnose logs what a failed step leaves in kyma-system: its workloads,
// their Pods and the logs of its Jobs.
func (e *env) diagnose(ctx context.Context, t *testing.T) {
	for _, args := range [][]string{
		{"-n", "kyma-system", "get", "deployments,jobs,pods", "-o", "wide"},
		{"-n", "kyma-system", "logs", "-l", "batch.kubernetes.io/controller-uid", "--all-containers", "--tail", "40"},
	} {
		out, err := e.kubectl(ctx, nil, args...)
		t.Logf("kubectl %s (%v):\n%s", strings.Join(args, " "), err, out)
	}
}

// logFailOpenCalls logs the calls kube-apiserver admitted without the
// webhook, each with its error: why the Pods without the term missed it.
func (e *env) logFailOpenCalls(t *testing.T) {
	calls, err := e.cluster.FailOpenCalls(40)
	if err != nil {
		t.Logf("kube-apiserver's log: %v", err)
	}
	for _, c := range calls {
		t.Logf("kube-apiserver: %s", c)
	}
}

// phase runs fn with the load's Pods attributed to name, and records the
// rise of the fail-open count over it. A failing fn ends the test.
func (e *env) phase(ctx context.Context, t *testing.T, l *load, name string, fn func() error) {
	t.Helper()
	before := e.failOpen(ctx, t)
	l.setPhase(name)
	err := fn()
	l.addFailOpen(name, e.failOpen(ctx, t)-before)
	if err != nil {
		t.Fatal(err)
	}
}

// failOpen is apiserver_admission_webhook_fail_open_count summed over the
// old and the new entry.
func (e *env) failOpen(ctx context.Context, t *testing.T) float64 {
	t.Helper()
	var total float64
	for _, name := range []string{oldEntry, newEntry} {
		v, err := stack.FailOpenCount(ctx, e.client, name)
		if err != nil {
			t.Fatal(err)
		}
		total += v
	}
	return total
}

// hold keeps the scenario, and the load, running for d.
func (e *env) hold(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// waitServed returns once a Pod in the load namespace gets the term: the
// installation serves.
func (e *env) waitServed(ctx context.Context, t *testing.T) {
	t.Helper()
	probe := newLoad(e.load, loadNamespace, 1)
	// Each attempt creates a Pod: one a second.
	err := poll.Until(ctx, "the old kim-snatch to serve: a Pod with the term", func(ctx context.Context) error {
		probe.setPhase("probe")
		probe.createOne(ctx, "probe")
		if _, c, errs := probe.report(); c["probe"].OneTerm == 0 {
			var last error
			if len(errs) > 0 {
				last = errs[len(errs)-1]
			}
			return fmt.Errorf("probe Pods %+v; last error: %v", c["probe"], last)
		}
		return nil
	}, poll.Timeout(3*time.Minute), poll.Interval(time.Second))
	if err != nil {
		t.Fatal(err)
	}
}

// checkOldReleased shows what happens to the old binary's ownership of
// the MWC before step 6: its forced apply at each certificate load makes
// it the owner of every field of the entry, and the syncer, running since
// step 2, removes that Apply entry again after each sync
// (--release-field-managers, default snatch): none is left, and the
// syncer's log names the release. Step 6's reset is what leaves nothing
// of it once the binary is gone, whatever came last.
func (e *env) checkOldReleased(ctx context.Context, t *testing.T) {
	t.Helper()
	mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mwc.ManagedFields {
		if mf.Manager == kimsnatch.FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply {
			t.Errorf("before step 6 the old binary's field manager %q still owns fields of the MWC; the syncer did not release it", mf.Manager)
		}
	}
	logs, err := e.kubectl(ctx, nil, "-n", namespace, "logs", "-l", "app.kubernetes.io/name=cabundle-syncer", "--tail=-1")
	if err != nil {
		t.Fatal(err)
	}
	released := fmt.Sprintf("%q:%q", logkeys.FieldManager, kimsnatch.FieldManager)
	if !strings.Contains(logs, released) {
		t.Errorf("before step 6 the syncer's log names no release of %q (%s); the old binary's apply was not released", kimsnatch.FieldManager, released)
	}
}

// checkMigrated holds the state after the migration to what the guide
// promises: no object of the old installation but the shared MWC and
// Secret, exactly one entry, the new Certificate the only writer of the
// Secret, and no field of the MWC owned by the old binary.
func (e *env) checkMigrated(ctx context.Context, t *testing.T) {
	t.Helper()
	old, err := without(kimsnatch.InstallYAML(), "MutatingWebhookConfiguration", "CustomResourceDefinition")
	if err != nil {
		t.Fatal(err)
	}
	if left, err := e.kubectl(ctx, old, "get", "-f", "-", "--ignore-not-found", "-o", "name"); err != nil || strings.TrimSpace(left) != "" {
		t.Errorf("objects of the old installation left after the migration: %q %v", left, err)
	}
	e.checkWriters(ctx, t, "kyma-system/kim-snatch-webhook")
	mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mwc.Webhooks) != 1 || mwc.Webhooks[0].Name != newEntry || mwc.Webhooks[0].ClientConfig.Service == nil ||
		mwc.Webhooks[0].ClientConfig.Service.Name != "snatch-webhook" || len(mwc.Webhooks[0].ClientConfig.CABundle) == 0 {
		t.Errorf("MWC after the migration: %+v", mwc.Webhooks)
	}
	for _, mf := range mwc.ManagedFields {
		if mf.Manager == kimsnatch.FieldManager {
			t.Errorf("the old binary's field manager %q still owns fields of the MWC", mf.Manager)
		}
	}
	if ca := e.secretCA(ctx, t); len(mwc.Webhooks) == 1 && !bytes.Contains(mwc.Webhooks[0].ClientConfig.CABundle, bytes.TrimSpace(ca)) {
		t.Errorf("caBundle after the migration does not hold the Secret's ca.crt")
	}
}

// secretCA returns the ca.crt of the shared Secret.
func (e *env) secretCA(ctx context.Context, t *testing.T) []byte {
	t.Helper()
	s, err := e.client.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[certtest.CAFile]
}

// checkRolledBack holds the state after the rollback to what the guide
// promises: no object of the new installation, its Lease or its
// annotation; the old installation whole, with the old entry; the old
// Certificate the only writer of the Secret.
func (e *env) checkRolledBack(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, base := range []string{"deploy/webhook", "deploy/syncer"} {
		rendered, err := e.kubectl(ctx, nil, "kustomize", base)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := without([]byte(rendered), "MutatingWebhookConfiguration")
		if err != nil {
			t.Fatal(err)
		}
		if left, err := e.kubectl(ctx, objs, "get", "-f", "-", "--ignore-not-found", "-o", "name"); err != nil || strings.TrimSpace(left) != "" {
			t.Errorf("objects of %s left after the rollback: %q %v", base, left, err)
		}
	}
	if _, err := e.client.CoordinationV1().Leases(namespace).Get(ctx, syncerLease, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Lease cabundle-syncer after the rollback: %v, want NotFound", err)
	}
	if _, err := e.kubectl(ctx, kimsnatch.InstallYAML(), "get", "-f", "-", "-o", "name"); err != nil {
		t.Errorf("the old installation is not whole after the rollback: %v", err)
	}
	e.checkWriters(ctx, t, "kyma-system/kim-snatch-kyma")
	mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The old binary has loaded the old Certificate's new certificate and
	// written its CA alone, as it did before the migration.
	if ca := e.secretCA(ctx, t); len(mwc.Webhooks) == 1 && !bytes.Equal(bytes.TrimSpace(mwc.Webhooks[0].ClientConfig.CABundle), bytes.TrimSpace(ca)) {
		t.Errorf("caBundle after the rollback is not the Secret's ca.crt alone:\n%s\nwant\n%s", mwc.Webhooks[0].ClientConfig.CABundle, ca)
	}
	for k := range mwc.Annotations {
		if strings.HasPrefix(k, "cabundle-syncer.") {
			t.Errorf("annotation %s left on the MWC after the rollback", k)
		}
	}
	if len(mwc.Webhooks) != 1 || mwc.Webhooks[0].Name != oldEntry || mwc.Webhooks[0].ClientConfig.Service == nil ||
		mwc.Webhooks[0].ClientConfig.Service.Name != kimsnatch.WebhookServiceName || mwc.Webhooks[0].ClientConfig.Service.Path == nil ||
		*mwc.Webhooks[0].ClientConfig.Service.Path != kimsnatch.Path {
		t.Errorf("MWC after the rollback: %+v", mwc.Webhooks)
	}
}

func (e *env) checkWriters(ctx context.Context, t *testing.T, want string) {
	t.Helper()
	writers, err := stack.Writers(ctx, e.dyn, namespace, secretName)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(writers, []string{want}) {
		t.Errorf("Certificates that write Secret %s: %v, want exactly %s", secretName, writers, want)
	}
}
