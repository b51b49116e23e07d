package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// kubeletProjectionDelay bounds how long the kubelet takes to update a
// mounted Secret: its sync period of a minute plus the cache's TTL.
const kubeletProjectionDelay = 90 * time.Second

// rolloutTimeout bounds a Deployment's rollout in a cluster.
const rolloutTimeout = 5 * time.Minute

// clusterSystem is a cluster with Gardener cert-management and deploy/
// applied, e.g. through test/e2e/overlay by hack/e2e/e2e-kind.sh.
// cert-management issues the Secret and renews it when the suite asks, as
// an operator would, with spec.renew. Everything else is what runs in the
// cluster, driven as an operator would, through the API: scaling, deleting
// Pods, editing the syncer's args.
type clusterSystem struct {
	cs         kubernetes.Interface
	dyn        dynamic.Interface
	kubeconfig string
	// webhookReplicas and syncerReplicas are the Deployments' sizes as
	// installed.
	webhookReplicas, syncerReplicas int32
	// deletedService, deletedDeployments (by name), webhookArgs and
	// stuckRollouts (the Deployments as they were, by name) are what the
	// breaks restore.
	deletedService     *corev1.Service
	deletedDeployments map[string]*appsv1.Deployment
	webhookArgs        []string
	stuckRollouts      map[string]*appsv1.Deployment
}

func newClusterSystem(ctx context.Context, kubeconfig string) (system, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 100, 200 // the load scenarios create 20 Pods/s
	cs, dyn, err := framework.Clients(cfg)
	if err != nil {
		return nil, err
	}
	c := &clusterSystem{cs: cs, dyn: dyn, kubeconfig: kubeconfig}
	logf("cluster: waiting for Gardener cert-management to write Secret %s/%s", stack.Namespace, stack.SecretName)
	if _, err := stack.WaitIssued(ctx, cs, dyn, logf); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, stack.CertManagementState(ctx, kubeconfig))
	}
	webhook, err := c.waitRollout(ctx, stack.WebhookName)
	if err != nil {
		return nil, err
	}
	c.webhookReplicas = replicasOf(webhook)
	syncer, err := c.waitRollout(ctx, stack.SyncerName)
	if err != nil {
		return nil, err
	}
	c.syncerReplicas = replicasOf(syncer)
	logf("cluster: waiting for the caBundle to hold the Secret's CA")
	if err := c.WaitBundleHas(ctx, 2*time.Minute, stack.CurrentFingerprint(ctx, cs)); err != nil {
		return nil, err
	}
	logf("cluster: waiting for the API server to call the webhook")
	if err := stack.WaitAdmits(ctx, cs, 2*time.Minute); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *clusterSystem) Clientset() kubernetes.Interface { return c.cs }
func (c *clusterSystem) KubeconfigPath() string          { return c.kubeconfig }
func (c *clusterSystem) ProjectionDelay() time.Duration  { return kubeletProjectionDelay }
func (c *clusterSystem) WebhookReplicas() int            { return int(c.webhookReplicas) }
func (c *clusterSystem) Stop() error                     { return nil }

// Renew has Gardener cert-management renew the Certificate.
func (c *clusterSystem) Renew(ctx context.Context) (string, error) {
	r, err := stack.Renew(ctx, c.cs, c.dyn, stack.Namespace, stack.CertificateName, stack.SecretName)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, stack.CertManagementState(ctx, c.kubeconfig))
	}
	logf("cert-management renewed %s: new CA %s in the Secret %s after spec.renew, Certificate Ready %s after that",
		stack.CertificateName, r.After, r.SecretWritten.Sub(r.Requested).Round(time.Millisecond), r.Ready.Sub(r.SecretWritten).Round(time.Millisecond))
	return r.After, nil
}

func (c *clusterSystem) WaitBundleHas(ctx context.Context, timeout time.Duration, fp string) error {
	return stack.WaitBundleHas(ctx, c.cs, timeout, fp)
}

// WaitServed waits until every webhook Pod has logged that it loaded the
// certificate: the Pods' addresses are not reachable from outside a kind
// cluster, their logs are. Each attempt reads every Pod's log, every 2 s,
// which is also how finely a caller's time to serve is measured.
func (c *clusterSystem) WaitServed(ctx context.Context, fp string) error {
	what := fmt.Sprintf("every webhook Pod to log %q with %s=%s", serving.MsgCertificateLoaded, logkeys.Fingerprint, fp)
	return poll.Until(ctx, what, func(ctx context.Context) error {
		pods, err := c.pods(ctx, stack.WebhookName)
		if err != nil {
			return err
		}
		if len(pods) == 0 {
			return errors.New("no webhook Pod")
		}
		var pending []string
		for _, p := range pods {
			if !loggedCertificate(ctx, c.cs, p.Name, fp) {
				pending = append(pending, p.Name)
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("not logged by %v", pending)
		}
		return nil
	}, poll.Timeout(kubeletProjectionDelay+2*time.Minute), poll.Interval(2*time.Second))
}

// loggedCertificate reports whether Pod name logged loading the
// certificate with fingerprint fp.
func loggedCertificate(ctx context.Context, cs kubernetes.Interface, name, fp string) bool {
	b, err := cs.CoreV1().Pods(stack.Namespace).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		if strings.Contains(line, serving.MsgCertificateLoaded) && strings.Contains(line, fp) {
			return true
		}
	}
	return false
}

// SetCAOverlap rolls the syncer out with --ca-overlap set.
func (c *clusterSystem) SetCAOverlap(ctx context.Context, overlap time.Duration) error {
	d, err := c.cs.AppsV1().Deployments(stack.Namespace).Get(ctx, stack.SyncerName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ctr := &d.Spec.Template.Spec.Containers[0]
	ctr.Args = slices.DeleteFunc(ctr.Args, func(a string) bool { return strings.HasPrefix(a, "--ca-overlap=") })
	ctr.Args = append(ctr.Args, "--ca-overlap="+overlap.String())
	if _, err := c.cs.AppsV1().Deployments(stack.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	_, err = c.waitRollout(ctx, stack.SyncerName)
	return err
}

func (c *clusterSystem) StopWebhooks(ctx context.Context) error {
	if err := c.scale(ctx, stack.WebhookName, 0); err != nil {
		return err
	}
	return c.waitGone(ctx, stack.WebhookName)
}

// StartWebhooks scales the webhook back and waits until the API server
// reaches it through the Service: a Pod created with dry-run gets the term.
func (c *clusterSystem) StartWebhooks(ctx context.Context) error {
	if err := c.scale(ctx, stack.WebhookName, c.webhookReplicas); err != nil {
		return err
	}
	if _, err := c.waitRollout(ctx, stack.WebhookName); err != nil {
		return err
	}
	return stack.WaitAdmits(ctx, c.cs, rolloutTimeout)
}

// RestartWebhook deletes webhook Pod i, as a rolling update or a node
// drain does, and waits until its replacement is ready.
func (c *clusterSystem) RestartWebhook(ctx context.Context, i int) error {
	pods, err := c.pods(ctx, stack.WebhookName)
	if err != nil {
		return err
	}
	if i >= len(pods) {
		return fmt.Errorf("webhook Pod %d of %d", i, len(pods))
	}
	name := pods[i].Name
	if err := c.cs.CoreV1().Pods(stack.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return poll.Until(ctx, "webhook Pod "+name+" replaced by a ready one", func(ctx context.Context) error {
		if err := podIsGone(c.cs, stack.Namespace, name)(ctx); err != nil {
			return err
		}
		d, err := c.cs.AppsV1().Deployments(stack.Namespace).Get(ctx, stack.WebhookName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != c.webhookReplicas {
			return fmt.Errorf("%d of %d replicas ready", d.Status.ReadyReplicas, c.webhookReplicas)
		}
		return nil
	}, poll.Timeout(rolloutTimeout))
}

// KillSyncerLeader deletes the Pod that holds the Lease without a grace
// period: the kubelet kills it, and it cannot release the Lease.
func (c *clusterSystem) KillSyncerLeader(ctx context.Context) error {
	lease, err := c.cs.CoordinationV1().Leases(stack.Namespace).Get(ctx, stack.LeaseName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return fmt.Errorf("lease %s/%s has no holder", stack.Namespace, stack.LeaseName)
	}
	zero := int64(0)
	return c.cs.CoreV1().Pods(stack.Namespace).Delete(ctx, syncer.HolderPodName(*lease.Spec.HolderIdentity), metav1.DeleteOptions{GracePeriodSeconds: &zero})
}

// StopSyncers scales the syncer to zero and waits until its Pods are gone;
// the leader releases the Lease as it stops.
func (c *clusterSystem) StopSyncers(ctx context.Context) error {
	if err := c.scale(ctx, stack.SyncerName, 0); err != nil {
		return err
	}
	return c.waitGone(ctx, stack.SyncerName)
}

// waitGone waits until no Pod of Deployment app is left, terminating ones
// included: a terminating replica still serves through its shutdown delay,
// and a terminating leader still holds the Lease.
func (c *clusterSystem) waitGone(ctx context.Context, app string) error {
	return poll.Until(ctx, "no Pod of "+app+" left", func(ctx context.Context) error {
		list, err := c.cs.CoreV1().Pods(stack.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + app})
		if err != nil {
			return err
		}
		if len(list.Items) > 0 {
			names := make([]string, 0, len(list.Items))
			for _, p := range list.Items {
				names = append(names, p.Name)
			}
			return fmt.Errorf("Pods left: %v", names)
		}
		return nil
	}, poll.Timeout(rolloutTimeout))
}

// RestoreSyncers scales the syncer back to its installed size and waits
// for the rollout.
func (c *clusterSystem) RestoreSyncers(ctx context.Context) error {
	if err := c.scale(ctx, stack.SyncerName, c.syncerReplicas); err != nil {
		return err
	}
	_, err := c.waitRollout(ctx, stack.SyncerName)
	return err
}

// pods returns the live Pods of a Deployment by name, sorted by name.
func (c *clusterSystem) pods(ctx context.Context, app string) ([]corev1.Pod, error) {
	list, err := c.cs.CoreV1().Pods(stack.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + app})
	if err != nil {
		return nil, err
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods, nil
}

func (c *clusterSystem) scale(ctx context.Context, name string, replicas int32) error {
	s, err := c.cs.AppsV1().Deployments(stack.Namespace).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Spec.Replicas = replicas
	_, err = c.cs.AppsV1().Deployments(stack.Namespace).UpdateScale(ctx, name, s, metav1.UpdateOptions{})
	return err
}

// waitRollout waits until Deployment name has rolled out its current
// generation with every replica ready, as `kubectl rollout status` does.
func (c *clusterSystem) waitRollout(ctx context.Context, name string) (*appsv1.Deployment, error) {
	var d *appsv1.Deployment
	err := poll.Until(ctx, "Deployment "+stack.Namespace+"/"+name+" to roll out", func(ctx context.Context) error {
		var err error
		if d, err = c.cs.AppsV1().Deployments(stack.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		want := replicasOf(d)
		st := d.Status
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != want || st.ReadyReplicas != want || st.Replicas != want {
			return fmt.Errorf("generation %d, observed %d; replicas %d, updated %d, ready %d, want %d",
				d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, want)
		}
		return nil
	}, poll.Timeout(rolloutTimeout))
	if err != nil {
		return nil, err
	}
	return d, nil
}

func replicasOf(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
