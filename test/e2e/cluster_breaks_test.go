package e2e

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The check's breaks in a cluster, done through the API as an operator's
// mistake would do them.

// DeleteService deletes the webhook's Service, keeping a copy to restore.
func (c *clusterSystem) DeleteService(ctx context.Context) error {
	svc, err := c.cs.CoreV1().Services(stack.Namespace).Get(ctx, stack.ServiceName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	c.deletedService = svc
	return c.cs.CoreV1().Services(stack.Namespace).Delete(ctx, stack.ServiceName, metav1.DeleteOptions{})
}

// RestoreService creates the deleted Service again, as a re-apply of
// deploy/ would, with a new ClusterIP.
func (c *clusterSystem) RestoreService(ctx context.Context) error {
	if c.deletedService == nil {
		return nil
	}
	svc := c.deletedService.DeepCopy()
	svc.ObjectMeta = forCreate(svc.ObjectMeta)
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
	_, err := c.cs.CoreV1().Services(stack.Namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	c.deletedService = nil
	return nil
}

// DeleteDeployment deletes the installation's Deployment name (the
// webhook's or the syncer's), keeping a copy to restore, and waits until
// its Pods are gone. Everything else of deploy/ stays, as after a deployer
// that pruned the one object.
func (c *clusterSystem) DeleteDeployment(ctx context.Context, name string) error {
	deployments := c.cs.AppsV1().Deployments(stack.Namespace)
	d, err := deployments.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if c.deletedDeployments == nil {
		c.deletedDeployments = map[string]*appsv1.Deployment{}
	}
	c.deletedDeployments[name] = d
	background := metav1.DeletePropagationBackground
	if err := deployments.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		return err
	}
	return c.waitGone(ctx, name)
}

// RestoreDeployment creates the deleted Deployment name again, as a
// re-apply of deploy/ would, and waits until it has rolled out and, for
// the webhook's, until the API server reaches it.
func (c *clusterSystem) RestoreDeployment(ctx context.Context, name string) error {
	deleted, ok := c.deletedDeployments[name]
	if !ok {
		return nil
	}
	d := deleted.DeepCopy()
	d.ObjectMeta = forCreate(d.ObjectMeta)
	d.Status = appsv1.DeploymentStatus{}
	_, err := c.cs.AppsV1().Deployments(stack.Namespace).Create(ctx, d, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	delete(c.deletedDeployments, name)
	if _, err := c.waitRollout(ctx, name); err != nil || name != stack.WebhookName {
		return err
	}
	return stack.WaitAdmits(ctx, c.cs, rolloutTimeout)
}

// AddWebhook runs a Pod of the webhook's template behind its Service, on a
// Secret of its own that holds files. The Deployment's ReplicaSet does not
// adopt it: it lacks the pod-template-hash its selector names.
func (c *clusterSystem) AddWebhook(ctx context.Context, name string, files map[string][]byte) (func(context.Context) error, error) {
	d, err := c.cs.AppsV1().Deployments(stack.Namespace).Get(ctx, stack.WebhookName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: stack.Namespace}, Data: files}
	if _, err := c.cs.CoreV1().Secrets(stack.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: stack.Namespace, Labels: d.Spec.Template.Labels},
		Spec:       *d.Spec.Template.Spec.DeepCopy(),
	}
	mounted := false
	for i, v := range pod.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == stack.SecretName {
			pod.Spec.Volumes[i].Secret.SecretName = name
			mounted = true
		}
	}
	if !mounted {
		return nil, fmt.Errorf("the webhook's template mounts no Secret %s", stack.SecretName)
	}
	remove := func(ctx context.Context) error {
		err := c.cs.CoreV1().Pods(stack.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := c.waitPodGone(ctx, name); err != nil {
			return err
		}
		err = c.cs.CoreV1().Secrets(stack.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if _, err := c.cs.CoreV1().Pods(stack.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	err = poll.Until(ctx, "webhook Pod "+name+" Ready", podIsReady(c.cs, stack.Namespace, name), poll.Timeout(rolloutTimeout))
	if err != nil {
		return nil, err
	}
	return remove, nil
}

// SetWebhookArgs rolls the webhook out with extra flags after the
// installed ones; nil rolls it back to them.
func (c *clusterSystem) SetWebhookArgs(ctx context.Context, extra []string) error {
	d, err := c.cs.AppsV1().Deployments(stack.Namespace).Get(ctx, stack.WebhookName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ctr := &d.Spec.Template.Spec.Containers[0]
	if c.webhookArgs == nil {
		c.webhookArgs = slices.Clone(ctr.Args)
	}
	ctr.Args = append(slices.Clone(c.webhookArgs), extra...)
	if _, err := c.cs.AppsV1().Deployments(stack.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		return err
	}
	_, err = c.waitRollout(ctx, stack.WebhookName)
	return err
}

// refusedFlag is a flag that neither binary knows: each refuses it at
// start and exits.
const refusedFlag = "--e2e-refused-flag"

// StickRollout adds refusedFlag to the first container of the Deployment
// name and sets its progressDeadlineSeconds to deadline, keeping the
// Deployment as it was to put back. It does not wait: the rollout never
// ends.
func (c *clusterSystem) StickRollout(ctx context.Context, name string, deadline time.Duration) error {
	deployments := c.cs.AppsV1().Deployments(stack.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.stuckRollouts == nil {
			c.stuckRollouts = map[string]*appsv1.Deployment{}
		}
		if _, ok := c.stuckRollouts[name]; !ok {
			c.stuckRollouts[name] = d.DeepCopy()
		}
		ctr := &d.Spec.Template.Spec.Containers[0]
		ctr.Args = append(slices.Clone(ctr.Args), refusedFlag)
		d.Spec.ProgressDeadlineSeconds = ptr.To(int32(deadline.Seconds()))
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// UnstickRollout gives the Deployment name its template and progress
// deadline from before StickRollout, where they differ (a rollout undo
// gives back the template alone), and waits until it has rolled out.
func (c *clusterSystem) UnstickRollout(ctx context.Context, name string) error {
	saved, ok := c.stuckRollouts[name]
	if !ok {
		return nil
	}
	deployments := c.cs.AppsV1().Deployments(stack.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(d.Spec.Template, saved.Spec.Template) &&
			equality.Semantic.DeepEqual(d.Spec.ProgressDeadlineSeconds, saved.Spec.ProgressDeadlineSeconds) {
			return nil
		}
		d.Spec.Template = saved.Spec.Template
		d.Spec.ProgressDeadlineSeconds = saved.Spec.ProgressDeadlineSeconds
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	delete(c.stuckRollouts, name)
	_, err = c.waitRollout(ctx, name)
	return err
}

func (c *clusterSystem) waitPodGone(ctx context.Context, name string) error {
	return poll.Until(ctx, "Pod "+name+" gone", podIsGone(c.cs, stack.Namespace, name), poll.Timeout(rolloutTimeout))
}

func podReady(p *corev1.Pod) bool {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podIsReady holds once Pod ns/name is Ready, and otherwise reports its
// phase and Ready condition.
func podIsReady(cs kubernetes.Interface, ns, name string) poll.Condition {
	return func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !podReady(p) {
			return fmt.Errorf("the Pod is not Ready: %s", podState(p))
		}
		return nil
	}
}

// podIsGone holds once Pod ns/name is deleted, and otherwise reports its
// phase and Ready condition.
func podIsGone(cs kubernetes.Interface, ns, name string) poll.Condition {
	return func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("the Pod is still there, deletion %v: %s", p.DeletionTimestamp, podState(p))
	}
}

// podState is a Pod's phase and Ready condition.
func podState(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return fmt.Sprintf("phase %s, Ready %s %s %s", p.Status.Phase, c.Status, c.Reason, c.Message)
		}
	}
	return fmt.Sprintf("phase %s, no Ready condition", p.Status.Phase)
}
