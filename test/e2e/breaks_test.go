package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The breaks of the check's items that reach into the installation: its
// Service, its replicas' certificates and flags.

// breaker is what these breaks need of the system. The local stack does
// them to its processes, a cluster through the API, as an operator's
// mistake would.
type breaker interface {
	DeleteService(ctx context.Context) error
	RestoreService(ctx context.Context) error
	RestartWebhook(ctx context.Context, i int) error
	// AddWebhook adds a webhook replica behind the Service that serves the
	// certificate files (tls.crt, tls.key, ca.crt); remove removes it.
	AddWebhook(ctx context.Context, name string, files map[string][]byte) (remove func(context.Context) error, err error)
	SetWebhookArgs(ctx context.Context, extra []string) error
	// DeleteDeployment deletes the installation's Deployment name;
	// RestoreDeployment creates it again.
	DeleteDeployment(ctx context.Context, name string) error
	RestoreDeployment(ctx context.Context, name string) error
	// StickRollout starts a rollout of the installation's Deployment name
	// whose new Pods never become available, with a progress deadline of
	// deadline; UnstickRollout puts the Deployment back as it was and
	// waits until it has rolled out.
	StickRollout(ctx context.Context, name string, deadline time.Duration) error
	UnstickRollout(ctx context.Context, name string) error
}

func local(t *testing.T) breaker {
	t.Helper()
	l, ok := sys.(breaker)
	if !ok {
		t.Skipf("%T cannot break this item", sys)
	}
	return l
}

// deleteWebhookService deletes the webhook's Service, as an operator's
// mistake might, and restarts the replicas so that the API server's
// kept-alive connections close: a new connection finds no Service.
func deleteWebhookService(t *testing.T) func(context.Context) error {
	l := local(t)
	ctx := context.Background()
	if err := l.DeleteService(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range sys.WebhookReplicas() {
		if err := l.RestartWebhook(ctx, i); err != nil {
			_ = l.RestoreService(ctx)
			t.Fatal(err)
		}
	}
	return l.RestoreService
}

// forCreate is the metadata of an object read from the API server that
// creates it again, as a re-apply of deploy/ would: its name, namespace,
// labels and annotations, without what the server set (UID, resource
// version, timestamps, field managers).
func forCreate(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}

// getDeleter is the part of a typed client of objects T that deleteSaved
// uses.
type getDeleter[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// deleteSaved deletes object name and returns it as it was, for a break
// to create it again.
func deleteSaved[T any](t *testing.T, objs getDeleter[T], name string) T {
	t.Helper()
	ctx := context.Background()
	saved, err := objs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return saved
}

// deleteDeployment returns a break that deletes the installation's
// Deployment name, as a deployer that pruned it would.
func deleteDeployment(name string) func(t *testing.T) func(context.Context) error {
	return func(t *testing.T) func(context.Context) error {
		l := local(t)
		if err := l.DeleteDeployment(context.Background(), name); err != nil {
			_ = l.RestoreDeployment(context.Background(), name)
			t.Fatal(err)
		}
		return func(ctx context.Context) error { return l.RestoreDeployment(ctx, name) }
	}
}

// stuckRollout returns a break that starts a rollout of the installation's
// Deployment name that stops, as a release with a flag its binary refuses
// would: the new Pod exits at start and the kubelet restarts it, so it
// never becomes available, while maxUnavailable 0 keeps the old replicas
// serving. Its progress deadline is lowered to 10 s, so that the Deployment
// controller marks the rollout stuck within the break, not after 10
// minutes. The deadline comes back when the test ends, whatever repaired
// the break: the runbook's rollout undo leaves it.
func stuckRollout(name string) func(t *testing.T) func(context.Context) error {
	return func(t *testing.T) func(context.Context) error {
		l := local(t)
		t.Cleanup(func() {
			if err := l.UnstickRollout(context.Background(), name); err != nil {
				t.Errorf("put the Deployment %s back: %v", name, err)
			}
		})
		if err := l.StickRollout(t.Context(), name, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) error { return l.UnstickRollout(ctx, name) }
	}
}

// deleteWebhookConfiguration deletes the MWC, as someone who disabled the
// webhook by hand without the marker of the emergency disable would.
func deleteWebhookConfiguration(t *testing.T) func(context.Context) error {
	mwcs := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations()
	saved := deleteSaved(t, mwcs, stack.WebhookConfigName)
	return func(ctx context.Context) error {
		m := saved.DeepCopy()
		m.ObjectMeta = forCreate(m.ObjectMeta)
		if _, err := mwcs.Create(ctx, m, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		return stack.WaitAdmits(ctx, sys.Clientset(), rolloutTimeout)
	}
}

// disableReason is the reason the emergency disable's marker gives.
const disableReason = "e2e: the webhook is suspected of slowing Pod creation"

// disableInAnEmergency disables the webhook as docs/operations.md
// ("Emergency disable and restore") says: first the marker, then the MWC
// deleted, so that the syncer never sees the MWC gone without it.
func disableInAnEmergency(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	configMaps := sys.Clientset().CoreV1().ConfigMaps(stack.Namespace)
	marker := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: syncer.EmergencyDisableName, Namespace: stack.Namespace},
		Data:       map[string]string{syncer.EmergencyDisableReasonKey: disableReason, syncer.EmergencyDisableByKey: "e2e"},
	}
	if _, err := configMaps.Create(ctx, marker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	restoreMWC := deleteWebhookConfiguration(t)
	return func(ctx context.Context) error {
		if err := restoreMWC(ctx); err != nil {
			return err
		}
		err := configMaps.Delete(ctx, syncer.EmergencyDisableName, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
}

// foreignReplica is the replica addForeignReplica adds.
const foreignReplica = stack.WebhookName + "-foreign"

// addForeignReplica adds a webhook replica behind the Service that serves
// a certificate for the Service's names from a CA the caBundle does not
// hold, as a replica would that mounts another installation's Secret.
func addForeignReplica(t *testing.T) func(context.Context) error {
	l := local(t)
	svc := stack.ServiceName + "." + stack.Namespace + ".svc"
	issued := certtest.MustCA(t, certtest.Options{DNSNames: []string{svc, svc + ".cluster.local"}})
	remove, err := l.AddWebhook(context.Background(), foreignReplica, issued.Files())
	if err != nil {
		t.Fatal(err)
	}
	// The runbook's Fix deletes the Pod alone: its Secret goes when the
	// test ends. A second remove finds nothing to delete.
	t.Cleanup(func() {
		if err := remove(context.Background()); err != nil {
			t.Errorf("remove the foreign replica: %v", err)
		}
	})
	return remove
}

// misnamedPool is a pool no Node belongs to.
const misnamedPool = "cpu-worker-9"

// misnamePool rolls the webhook replicas out with --worker-pool naming a
// pool that has no Nodes, as a typo in an overlay would.
func misnamePool(t *testing.T) func(context.Context) error {
	l := local(t)
	if err := l.SetWebhookArgs(context.Background(), []string{"--" + affinity.FlagWorkerPool + "=" + misnamedPool}); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error { return l.SetWebhookArgs(ctx, nil) }
}

// whileDown is what podsWhileWebhooksDown created.
var whileDown struct {
	ns      string
	offPool bool
}

// podsWhileWebhooksDown stops every webhook replica, creates a Kyma
// Deployment of 3, which the API server admits without the term, waits
// until the scheduler has bound its Pods, and starts the webhooks again.
// The repair is the remedy the check names: restarting the owner. Without
// a kubelet a rollout never completes, so the Pods are deleted at once
// and the ReplicaSet creates them again, now through the webhook.
func podsWhileWebhooksDown(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	ns := namespace(t, "e2e-down", true)
	if err := sys.StopWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	pods := runDeployment(t, ns, deployment("operator", 3, "100m"), 3)
	if err := sys.StartWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	pool := pools(t)
	whileDown.ns, whileDown.offPool = ns, false
	for _, p := range pods {
		if n := poolTerms(&p); n != 0 {
			t.Fatalf("%s/%s has %d terms, created while no webhook ran", ns, p.Name, n)
		}
		if pool[p.Spec.NodeName] != framework.KymaPool {
			whileDown.offPool = true
		}
	}
	logf("Kyma Deployment created while the webhooks were down: placement %v", placement(pods, pool))
	return func(ctx context.Context) error {
		zero := int64(0)
		return sys.Clientset().CoreV1().Pods(ns).DeleteCollection(ctx,
			metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: "app=operator"})
	}
}

// offPoolIfAny drops KimSnatchKymaPodsOffPool from the alerts of
// podsWhileWebhooksDown unless the scheduler put one of its Pods on the
// customer pool.
func offPoolIfAny(alerts []string) []string {
	if whileDown.offPool {
		return alerts
	}
	return slices.DeleteFunc(slices.Clone(alerts), func(a string) bool { return a == alertPodsOffPool })
}

// failOpenPods creates Pods in a Kyma namespace, a burst of burstSize at a
// time, until the API server has failed open on at least one, and returns
// what deletes them. A fault in reaching a replica shows only on a new
// connection: the API server verifies a replica's certificate when it
// dials, and reuses the connections it keeps. It keeps up to 25 idle per
// webhook host (client-go's transport defaults), so a burst larger than
// that makes it dial again on every burst, each dial to a Ready endpoint.
func failOpenPods(t *testing.T) func() {
	const burstSize = 40
	t.Helper()
	ns := namespace(t, "e2e-failopen", true)
	start := failOpen(t)
	// Unthrottled: a burst must reach the API server at once, or it reuses
	// the connections it keeps and never dials again.
	cs := unthrottled(t)
	created := 0
	poll.Eventually(t, "the API server to fail open", func(ctx context.Context) error {
		if failOpen(t) > start {
			return nil
		}
		createGated(ctx, t, cs, ns, burstSize)
		created += burstSize
		return fmt.Errorf("no fail-open after %d Pods", created)
	}, poll.Timeout(2*time.Minute))
	logf("fail-open after %d Pods: %v more", created, failOpen(t)-start)
	return deletePods(t, ns)
}

// waitLeaderRefusedAgain waits until the leading syncer has been refused
// one more caBundle write, so that its error counter rises after the
// break, as it does while the fault lasts.
func waitLeaderRefusedAgain(t *testing.T) func() {
	t.Helper()
	lf, ok := sys.(leaderFinder)
	if !ok {
		t.Skipf("%T cannot find the leader", sys)
	}
	ctx := context.Background()
	leader, err := lf.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := applyFailures(leader)
	err = poll.Until(ctx, "leader "+leader.Name+" to be refused again", refusedAgain(leader, before), poll.Timeout(3*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return func() {}
}

// podsUntilAlert creates gated Pods in a Kyma namespace, a burst of 250
// at a time, as a cluster whose operators keep deploying would, until
// alert is active in the Prometheus of profile, and returns what deletes
// them. After each burst it gives Prometheus 20 s to see them; the next
// burst may then overshoot by the Pods of one scrape of
// kube-state-metrics. Where the suite runs no Prometheus stack it creates
// one burst.
func podsUntilAlert(t *testing.T, watch *alertWatch, profile, alert string) func() {
	const burstSize, most = 250, 3000
	t.Helper()
	ns := namespace(t, "e2e-deploying", true)
	cs := unthrottled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	created := 0
	for {
		createGated(ctx, t, cs, ns, burstSize)
		created += burstSize
		if watch == nil {
			break
		}
		what := fmt.Sprintf("%s active in the %s profile", alert, profileTitles[profile])
		err := poll.Until(ctx, what, watch.active(profile, alert), poll.Timeout(20*time.Second))
		if err == nil {
			break
		}
		if created >= most {
			t.Fatalf("after %d Pods: %v", created, err)
		}
	}
	logf("%d Pods created, and %s active in the %s profile", created, alert, profileTitles[profile])
	return deletePods(t, ns)
}

// deletePods returns what deletes every Pod of ns at once.
func deletePods(t *testing.T, ns string) func() {
	return func() {
		zero := int64(0)
		err := sys.Clientset().CoreV1().Pods(ns).DeleteCollection(context.Background(),
			metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		if err != nil {
			t.Errorf("delete the Pods of %s: %v", ns, err)
		}
	}
}

// unthrottled returns a client of the cluster without client-side rate
// limits, so that a burst reaches the API server at once.
func unthrottled(t *testing.T) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", sys.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// createGated creates n gated Pods in ns at once.
func createGated(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, gatedPod("held"), metav1.CreateOptions{}); err != nil {
				t.Logf("create a Pod in %s: %v", ns, err)
			}
		})
	}
	wg.Wait()
}

// checkRole is the Role of deploy/syncer/check.yaml with which the check's
// own identity reads the Secret, the marker, the Lease, the Services and
// the EndpointSlices of the installation's namespace.
const checkRole = "kim-snatch-check"

// failedCheckJob is the name of the check Job that checkRoleDeleted's
// exercise runs, which the alert then names.
const failedCheckJob = "kim-snatch-check-e2e-incomplete"

// deleteCheckRole deletes checkRole, as an apply that left it out would:
// check run as the cluster's admin passes, and only a run under the
// check's own ServiceAccount, the in-cluster Job, cannot read what it
// checks and fails INCOMPLETE. Restoring creates the Role again.
func deleteCheckRole(t *testing.T) func(context.Context) error {
	roles := sys.Clientset().RbacV1().Roles(stack.Namespace)
	saved := deleteSaved(t, roles, checkRole)
	return func(ctx context.Context) error {
		_, err := roles.Create(ctx, &rbacv1.Role{ObjectMeta: forCreate(saved.ObjectMeta), Rules: saved.Rules}, metav1.CreateOptions{})
		return err
	}
}

// failCheckJob runs the check Job failedCheckJob, as docs/operations.md
// runs it, and requires that it fails.
func failCheckJob(t *testing.T) func() {
	if logs, completed := runCheckJobNamed(t, failedCheckJob); completed {
		t.Fatalf("the check Job completed without the check's Role:\n%s", logs)
	}
	return func() {}
}
