package migration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// versionLabel is the label of every object of a binary's release that
// names the release.
const versionLabel = "app.kubernetes.io/version"

// syncerLease is the Lease of cabundle-syncer's leader election.
const syncerLease = "cabundle-syncer"

// skip labels the Manifest skip-reconciliation and pins version: through
// several reconciles the runtime stays at the release it runs, and the
// Manifest's status too. Without the label it converges to version.
func (f *fleet) skip(ctx context.Context, t *testing.T, l *load, version string) {
	t.Helper()
	phase := "skip: " + version
	f.e.phase(ctx, t, l, phase, func() error {
		f.e.progress("%s", phase)
		before, err := f.deployments(ctx)
		if err != nil {
			return err
		}
		was := &klm.Manifest{}
		if err := f.cl.Get(ctx, f.key, was); err != nil {
			return err
		}
		if err := f.label(ctx, "true"); err != nil {
			return err
		}
		if err := f.pin(ctx, version); err != nil {
			return err
		}
		if err := f.waitPasses(ctx, 3); err != nil {
			return err
		}
		after, err := f.deployments(ctx)
		if err != nil {
			return err
		}
		for name, d := range before {
			if a := after[name]; a == nil || a.Generation != d.Generation ||
				a.Spec.Template.Labels[versionLabel] != d.Spec.Template.Labels[versionLabel] {
				t.Errorf("skip-reconciliation: Deployment %s changed while the Manifest was skipped", name)
			}
		}
		m := &klm.Manifest{}
		if err := f.cl.Get(ctx, f.key, m); err != nil {
			return err
		}
		if m.Status.ObservedVersion != was.Status.ObservedVersion || m.Status.State != was.Status.State {
			t.Errorf("skip-reconciliation: the Manifest's status changed from %+v to %+v", was.Status, m.Status)
		}
		if err := f.label(ctx, ""); err != nil {
			return err
		}
		start := time.Now()
		if _, err := f.waitReady(ctx, version); err != nil {
			return err
		}
		f.ready[phase] = time.Since(start)
		return f.e.waitSettled(ctx)
	})
	f.alerts.observe(ctx, "skip")
	f.checkRolled(ctx, t, version, "cabundle-syncer")
}

// label sets the Manifest's skip-reconciliation label to value, or
// removes it if value is empty.
func (f *fleet) label(ctx context.Context, value string) error {
	m := &klm.Manifest{}
	if err := f.cl.Get(ctx, f.key, m); err != nil {
		return err
	}
	p := client.MergeFrom(m.DeepCopy())
	if value == "" {
		delete(m.Labels, klm.SkipReconciliationLabel)
	} else {
		m.Labels[klm.SkipReconciliationLabel] = value
	}
	return f.cl.Patch(ctx, m, p)
}

// waitPasses waits until the stand-in has finished n more reconciles of
// the Manifest, so that what is then found unchanged has been looked at.
func (f *fleet) waitPasses(ctx context.Context, n int) error {
	want := f.klm.Passes(f.key) + n
	return poll.Until(ctx, fmt.Sprintf("%d more reconciles of the Manifest", n), func(context.Context) error {
		if got := f.klm.Passes(f.key); got < want {
			return fmt.Errorf("%d reconciles, want %d", got, want)
		}
		return nil
	}, poll.Timeout(stepTimeout))
}

// deployments returns the module's two Deployments by name.
func (f *fleet) deployments(ctx context.Context) (map[string]*appsv1.Deployment, error) {
	out := map[string]*appsv1.Deployment{}
	for _, name := range []string{"snatch-webhook", "cabundle-syncer"} {
		d, err := f.e.client.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
}

// checkRolled waits until both Deployments are rolled out in full, and a
// ready syncer Pod holds the Lease, as the operator waits before the next
// step: lifecycle-manager's Ready reads only the first Deployment of the
// manifest, and the syncer's last old replica releases the Lease as it
// stops, a few seconds before a new one takes it. It then holds the
// Deployments to the releases of the module version: the one of binary
// changed, the other as it was.
func (f *fleet) checkRolled(ctx context.Context, t *testing.T, version, binary string) {
	t.Helper()
	var ds map[string]*appsv1.Deployment
	err := poll.Until(ctx, "the Deployments rolled out and the Lease held", func(ctx context.Context) error {
		var err error
		if ds, err = f.deployments(ctx); err != nil {
			return poll.Stop(err)
		}
		for name, d := range ds {
			if st := d.Status; st.ObservedGeneration != d.Generation || st.UpdatedReplicas != *d.Spec.Replicas ||
				st.AvailableReplicas != *d.Spec.Replicas || st.Replicas != *d.Spec.Replicas {
				return fmt.Errorf("Deployment %s: %+v", name, st)
			}
		}
		unheld, err := f.e.leaseUnheld(ctx)
		if err != nil {
			return poll.Stop(err)
		}
		if unheld != "" {
			return errors.New(unheld)
		}
		return nil
	}, poll.Timeout(stepTimeout))
	if err != nil {
		t.Fatalf("%s: %v", version, err)
	}
	want := map[string]string{"snatch-webhook": pairs[version][0], "cabundle-syncer": pairs[version][1]}
	for name, d := range ds {
		if got := d.Spec.Template.Labels[versionLabel]; got != want[name] {
			t.Errorf("%s: Deployment %s runs %q, want %q", version, name, got, want[name])
		}
	}
	f.e.progress("%s: %s rolled out; snatch-webhook %s, cabundle-syncer %s", version, binary, want["snatch-webhook"],
		want["cabundle-syncer"])
}

// checkModule holds the runtime at the module to what the fleet path
// promises, which is what the manual migration promises (checkMigrated),
// with the bridge's match condition gone, and `check` passing in the
// cluster.
func (f *fleet) checkModule(ctx context.Context, t *testing.T, version string) {
	t.Helper()
	e := f.e
	e.checkMigrated(ctx, t)
	mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mwc.Webhooks {
		if len(w.MatchConditions) != 0 {
			t.Errorf("%s: entry %s keeps match conditions %+v", version, w.Name, w.MatchConditions)
		}
	}
	if failed, err := e.checkInCluster(ctx, version); err != nil {
		t.Error(err)
	} else if len(failed) > 0 {
		t.Errorf("%s: check items that did not pass: %v", version, failed)
	}
}

// checkOld holds the runtime back at kim-snatch to what the fleet path
// promises: none of KIM Snatch's workloads, kim-snatch whole with its one
// entry, its Certificate the only writer of the Secret. The syncer's
// annotation and caBundle may stay: kim-snatch force-applies the MWC.
func (f *fleet) checkOld(ctx context.Context, t *testing.T) {
	t.Helper()
	e := f.e
	for _, kind := range []string{"deployments", "services", "cronjobs"} {
		out, err := e.kubectl(ctx, nil, "-n", namespace, "get", kind, "-l", "app.kubernetes.io/name in (snatch-webhook,cabundle-syncer)", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("%s of KIM Snatch left after the way back: %q %v", kind, out, err)
		}
	}
	old, err := without(kimsnatch.InstallYAML(), "CustomResourceDefinition")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubectl(ctx, old, "get", "-f", "-", "-o", "name"); err != nil {
		t.Errorf("kim-snatch is not whole after the way back: %v", err)
	}
	e.checkWriters(ctx, t, "kyma-system/kim-snatch-kyma")
	mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mwc.Webhooks) != 1 || mwc.Webhooks[0].Name != oldEntry || mwc.Webhooks[0].ClientConfig.Service == nil ||
		mwc.Webhooks[0].ClientConfig.Service.Name != kimsnatch.WebhookServiceName || len(mwc.Webhooks[0].MatchConditions) != 0 {
		t.Errorf("MWC after the way back: %+v", mwc.Webhooks)
	}
}

// checkInCluster runs the health check as docs/migration.md has the
// operator run it: a Job from the CronJob kim-snatch-check, whose log is
// check's report. It returns the items that did not pass, but for the two
// that judge Pods and Nodes older than the step (placement, kyma-pool),
// which may warn.
func (e *env) checkInCluster(ctx context.Context, version string) ([]string, error) {
	cj, err := e.client.BatchV1().CronJobs(namespace).Get(ctx, "kim-snatch-check", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	e.checks++
	name := fmt.Sprintf("kim-snatch-check-fleet-%d", e.checks)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: cj.Spec.JobTemplate.Spec}
	if _, err := e.client.BatchV1().Jobs(namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	err = poll.Until(ctx, "the check Job "+name+" to finish", func(ctx context.Context) error {
		j, err := e.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("%d active, %d succeeded, %d failed", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
	}, poll.Timeout(5*time.Minute))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", version, err)
	}
	log, err := e.kubectl(ctx, nil, "-n", namespace, "logs", "job/"+name)
	if err != nil {
		return nil, err
	}
	var failed []string
	items := 0
	for _, line := range strings.Split(log, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || line[0] < 'a' || line[0] > 'z' {
			continue
		}
		items++
		if fields[1] == "PASS" || fields[1] == "WARN" && slices.Contains([]string{"placement", "kyma-pool"}, fields[0]) {
			continue
		}
		failed = append(failed, fields[0]+"="+fields[1])
	}
	if items == 0 {
		return nil, fmt.Errorf("%s: the check Job's log holds no report:\n%s", version, log)
	}
	e.progress("%s: check, %d items:\n%s", version, items, log)
	return failed, nil
}

// report logs a table per scenario, the Pods of each of its steps and the
// time until the Manifest was Ready, and holds every step to the target:
// no Pod without the term or with two, no failed create, and no rise of
// the fail-open count.
func (f *fleet) report(t *testing.T, l *load) {
	t.Helper()
	phases, byPhase, errs := l.report()
	var all counts
	scenario, total := "", counts{}
	flush := func() {
		if scenario != "" {
			t.Logf("%-30s %s", scenario+" in all", total)
		}
	}
	t.Logf("%-30s %6s %6s %7s %6s %7s %9s %8s", "step", "Pods", "1 term", "2 terms", "none", "errors", "fail-open", "Ready")
	for _, p := range phases {
		s, _, _ := strings.Cut(p, ": ")
		if s != scenario {
			flush()
			scenario, total = s, counts{}
		}
		c := byPhase[p]
		total.add(c)
		all.add(c)
		ready := "-"
		if d, ok := f.ready[p]; ok {
			ready = fmt.Sprintf("%.0f s", d.Seconds())
		}
		t.Logf("%-30s %6d %6d %7d %6d %7d %9.0f %8s", p, c.Pods, c.OneTerm, c.TwoTerms, c.NoTerm, c.Errors, c.FailOpen, ready)
		if c.TwoTerms > 0 || c.NoTerm > 0 || c.Errors > 0 || c.FailOpen > 0 {
			t.Errorf("%s: %s; want every Pod with one term and no fail-open", p, c)
		}
	}
	flush()
	t.Logf("total: %s", all)
	if all.NoTerm > 0 || all.FailOpen > 0 {
		f.e.logFailOpenCalls(t)
	}
	for _, s := range []string{"there", "upgrades", "skip", "back"} {
		f.alerts.table(t, s)
	}
	for _, err := range errs {
		t.Error(err)
	}
	if all.Pods < podsPerSecond*60 {
		t.Errorf("only %d Pods were created; the scenario ran too short to show anything", all.Pods)
	}
}

// leaseUnheld says why no ready syncer Pod holds the syncer's Lease, or ""
// if one does.
func (e *env) leaseUnheld(ctx context.Context) (string, error) {
	lease, err := e.client.CoordinationV1().Leases(namespace).Get(ctx, syncerLease, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return "the Lease has no holder", nil
	}
	holder := syncer.HolderPodName(*lease.Spec.HolderIdentity)
	pods, err := e.readyPods(ctx, namespace, "app.kubernetes.io/name=cabundle-syncer")
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == holder }) {
		return fmt.Sprintf("the Lease's holder %s is no ready syncer Pod", holder), nil
	}
	return "", nil
}
