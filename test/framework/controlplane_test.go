package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

func TestControlPlaneServesLabelledNamespaceAndPod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{})
	ctx := t.Context()

	info, err := c.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if !strings.HasPrefix(info.GitVersion, "v1.36.") {
		t.Fatalf("server reports %q, want v1.36.x", info.GitVersion)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   "kyma-system",
		Labels: map[string]string{"operator.kyma-project.io/managed-by": "kyma"},
	}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	got, err := c.Clientset.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace: %v", err)
	}
	if got.Labels["operator.kyma-project.io/managed-by"] != "kyma" {
		t.Fatalf("namespace labels = %v, want managed-by=kyma", got.Labels)
	}
	if _, err := c.Clientset.CoreV1().Pods(ns.Name).Create(ctx, testPod("smoke", nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if err := c.Healthy(); err != nil {
		t.Fatal(err)
	}
}

func TestSchedulerBindsRequiredPoolToThatPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{Scheduler: true})
	ctx := t.Context()
	for _, pool := range []string{KymaPool, CustomerPool} {
		if _, err := c.CreateNodes(ctx, pool, 2); err != nil {
			t.Fatal(err)
		}
	}
	required := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: PoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{KymaPool}}},
		}}},
	}}
	// Five Pods: a scheduler that ignored the term would put all five on
	// the Kyma pool by chance once in 32 runs.
	const pods = 5
	for i := range pods {
		p := testPod("required-"+string(rune('a'+i)), required)
		if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}

	nodePool := map[string]string{}
	nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		nodePool[n.Name] = n.Labels[PoolLabel]
	}
	poll.Eventually(t, fmt.Sprintf("%d Pods bound", pods), func(ctx context.Context) error {
		list, err := c.Clientset.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if bound != pods {
			return fmt.Errorf("%d of %d Pods bound", bound, len(list.Items))
		}
		return nil
	}, poll.Timeout(time.Minute))
	list, err := c.Clientset.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if pool := nodePool[p.Spec.NodeName]; pool != KymaPool {
			t.Errorf("pod %s bound to node %s in pool %q, want pool %s", p.Name, p.Spec.NodeName, pool, KymaPool)
		}
	}
}

func TestCreateNodesAreReadyAndUntainted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{})
	nodes, err := c.CreateNodes(t.Context(), CustomerPool, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		got, err := c.Clientset.CoreV1().Nodes().Get(t.Context(), n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels[PoolLabel] != CustomerPool {
			t.Errorf("node %s pool label = %q, want %q", n.Name, got.Labels[PoolLabel], CustomerPool)
		}
		if len(got.Spec.Taints) != 0 {
			t.Errorf("node %s has taints %v, want none", n.Name, got.Spec.Taints)
		}
		ready := false
		for _, cond := range got.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("node %s is not Ready: %v", n.Name, got.Status.Conditions)
		}
		if got.Status.Allocatable.Cpu().IsZero() {
			t.Errorf("node %s has no allocatable CPU", n.Name)
		}
	}
}

func testPod(name string, affinity *corev1.Affinity) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Affinity:   affinity,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// APIServerArgs replace the framework's value of a flag. Repeating a list
// flag would instead add to it: --disable-admission-plugins=TaintNodesByCondition
// after the framework's ServiceAccount,TaintNodesByCondition would leave
// ServiceAccount admission off.
func TestAPIServerArgsReplaceTheFrameworksValue(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{APIServerArgs: []string{"--disable-admission-plugins=TaintNodesByCondition"}})
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "no-default-service-account"}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Nothing creates the namespace's default ServiceAccount: no
	// kube-controller-manager runs.
	_, err := c.Clientset.CoreV1().Pods(ns.Name).Create(ctx, testPod("needs-a-service-account", nil), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "service account") {
		t.Fatalf("create a Pod without its ServiceAccount: %v; want it forbidden by ServiceAccount admission", err)
	}
}

// kube-controller-manager signs legacy ServiceAccount tokens with the key
// envtest writes for kube-apiserver, and publishes the API server's serving
// CA; see startControllerManager.
func TestControllerManagerSignsTokensTheAPIServerAccepts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{ControllerManager: true})
	ctx := t.Context()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-token", Namespace: "default", Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	var token []byte
	var rootCA string
	poll.Eventually(t, "a token in Secret "+secret.Name+" and kube-root-ca.crt", func(ctx context.Context) error {
		// The Secret needs the ServiceAccount, which the controllers create.
		if _, err := c.Clientset.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		got, err := c.Clientset.CoreV1().Secrets("default").Get(ctx, secret.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		token = got.Data[corev1.ServiceAccountTokenKey]
		cm, err := c.Clientset.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return err
		}
		rootCA = cm.Data["ca.crt"]
		if len(token) == 0 {
			return errors.New("the Secret has no token")
		}
		return nil
	}, poll.Timeout(time.Minute))
	if rootCA != string(c.Config.CAData) {
		t.Errorf("kube-root-ca.crt holds\n%s\nwant the API server's serving CA\n%s", rootCA, c.Config.CAData)
	}
	cfg := rest.AnonymousClientConfig(c.Config)
	cfg.BearerToken = string(token)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the API server rejects the token kube-controller-manager signed: %v", err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:default:default"; got != want {
		t.Errorf("token authenticates as %q, want %q", got, want)
	}
}
