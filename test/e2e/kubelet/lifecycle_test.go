package kubelet_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/e2e/kubelet"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// app is an in-process container for the Func runtime: it serves
// /readyz on its port "http", 200 while ready is set.
type app struct {
	ready   atomic.Bool
	release chan struct{} // Stop waits for it, or the grace period

	mu      sync.Mutex
	started []*kubelet.Container
	running []*appRun
}

type appRun struct {
	srv   *http.Server
	proc  *kubelet.InProcess
	grace time.Duration
}

func (a *app) start(_ context.Context, c *kubelet.Container) (kubelet.Running, error) {
	ln, err := net.Listen("tcp", c.Addr(intstr.FromString("http")))
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !a.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	run := &appRun{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = run.srv.Serve(ln) }()
	run.proc = kubelet.NewInProcess(func(grace time.Duration) int {
		a.mu.Lock()
		run.grace = grace
		a.mu.Unlock()
		select {
		case <-a.release:
		case <-time.After(grace):
		}
		_ = run.srv.Close()
		return 0
	})
	a.mu.Lock()
	a.started = append(a.started, c)
	a.running = append(a.running, run)
	a.mu.Unlock()
	return run.proc, nil
}

// crash ends start i with exit code 1, as a process that dies.
func (a *app) crash(i int) {
	a.mu.Lock()
	run := a.running[i]
	a.mu.Unlock()
	_ = run.srv.Close()
	run.proc.Exit(1)
}

func (a *app) container(t *testing.T, i int) *kubelet.Container {
	t.Helper()
	var c *kubelet.Container
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.started) > i {
			c = a.started[i]
		}
		return c != nil, nil
	})
	if err != nil {
		t.Fatalf("start %d of the container did not happen: %v", i, err)
	}
	return c
}

func TestPodLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	const lns = "kubelet-test"
	ctx := t.Context()
	c := framework.New(t, framework.Options{})
	skipExternal(t, c)
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	cs := kubernetes.NewForConfigOrDie(cfg)
	nodes, err := c.CreateNodes(ctx, framework.KymaPool, 1)
	must(t, err)
	node := nodes[0].Name
	must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}))
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lns}}, metav1.CreateOptions{})
	must(t, err)
	_, err = cs.CoreV1().ServiceAccounts(lns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{})
	must(t, err)
	_, err = cs.CoreV1().ConfigMaps(lns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data: map[string]string{"greeting": "hi"}}, metav1.CreateOptions{})
	must(t, err)
	secret, err := cs.CoreV1().Secrets(lns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "certs"},
		Data: map[string][]byte{"tls.crt": []byte("one")}}, metav1.CreateOptions{})
	must(t, err)

	a := &app{release: make(chan struct{})}
	k, err := kubelet.Start(ctx, kubelet.Options{
		Config: cfg, Namespace: lns, Dir: t.TempDir(),
		ProjectionDelay: 500 * time.Millisecond,
		Runtimes:        map[string]kubelet.Runtime{"app": kubelet.Func(a.start)},
		MaxProbePeriod:  100 * time.Millisecond,
		RestartBackoff:  200 * time.Millisecond,
		Logf:            t.Logf,
	})
	must(t, err)
	t.Cleanup(func() {
		select {
		case <-a.release:
		default:
			close(a.release)
		}
		k.Stop()
	})

	_, err = cs.CoreV1().Services(lns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "demo"}, Ports: []corev1.ServicePort{
			{Name: "web", Port: 80, TargetPort: intstr.FromString("http")},
			{Name: "admin", Port: 81, TargetPort: intstr.FromInt32(9443)},
			{Name: "absent", Port: 82, TargetPort: intstr.FromString("no-such-port")},
		}},
	}, metav1.CreateOptions{})
	must(t, err)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-0", Labels: map[string]string{"app": "demo"}},
		Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: "app", TerminationGracePeriodSeconds: ptr.To[int64](3),
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.example:5000/team/app:v1",
				Args:  []string{"--webhook-port=9443", "--cert-dir=/etc/certs", "--pod=$(POD)"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "greeting"}}},
					{Name: "MSG", Value: "$(GREETING) $(POD) $$(POD)"},
				},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 10, ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "certs", MountPath: "/etc/certs", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "certs"}}}},
		},
	}
	other := pod.DeepCopy()
	other.Name, other.Labels = "other", map[string]string{"app": "demo"}
	other.Spec.Containers[0].Image = "registry.example/team/unknown:v1"
	_, err = cs.CoreV1().Pods(lns).Create(ctx, other, metav1.CreateOptions{})
	must(t, err)
	pod, err = cs.CoreV1().Pods(lns).Create(ctx, pod, metav1.CreateOptions{})
	must(t, err)

	// What the container gets.
	ctr := a.container(t, 0)
	certDir := ctr.Mounts["/etc/certs"]
	want := []string{fmt.Sprintf("--webhook-port=%d", ctr.Ports[9443]), "--cert-dir=" + certDir, "--pod=demo-0"}
	if !slices.Equal(ctr.Args, want) || ctr.Ports[8080] == 0 || ctr.Ports[9443] == 0 {
		t.Errorf("args = %q with ports %v, want %q", ctr.Args, ctr.Ports, want)
	}
	for _, kv := range []string{"POD=demo-0", "GREETING=hi", "MSG=hi demo-0 $(POD)", "KUBECONFIG=" + ctr.Kubeconfig} {
		if !slices.Contains(ctr.Env, kv) {
			t.Errorf("env %q lacks %s", ctr.Env, kv)
		}
	}
	if b, err := os.ReadFile(filepath.Join(certDir, "tls.crt")); err != nil || string(b) != "one" {
		t.Errorf("tls.crt in the volume = %q, %v; want the Secret's", b, err)
	}
	review, err := ctr.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	must(t, err)
	if user := review.Status.UserInfo.Username; user != "system:serviceaccount:"+lns+":app" {
		t.Errorf("the container's client authenticates as %q", user)
	}

	// Running, not ready, then ready, with the endpoints following.
	waitPod(t, cs, lns, "demo-0", "Running and not ready", func(p *corev1.Pod) bool {
		s := p.Status
		return s.Phase == corev1.PodRunning && !ready(p) && s.HostIP == "192.0.2.10" && s.PodIP == "" && s.StartTime != nil &&
			len(s.ContainerStatuses) == 1 && s.ContainerStatuses[0].State.Running != nil && ptr.Deref(s.ContainerStatuses[0].Started, false)
	})
	slice := waitSlice(t, cs, lns, "not ready", func(s *discoveryv1.EndpointSlice) bool {
		c := s.Endpoints[0].Conditions
		return !*c.Ready && !*c.Serving && !*c.Terminating
	})
	ports := map[string]int32{}
	for _, p := range slice.Ports {
		ports[*p.Name] = *p.Port
	}
	if len(ports) != 2 || ports["web"] != int32(ctr.Ports[8080]) || ports["admin"] != int32(ctr.Ports[9443]) { //nolint:gosec // ports
		t.Errorf("slice ports %v, want web at %d and admin at %d", ports, ctr.Ports[8080], ctr.Ports[9443])
	}
	if ref := slice.Endpoints[0].TargetRef; ref == nil || ref.UID != pod.UID || ptr.Deref(slice.Endpoints[0].NodeName, "") != node {
		t.Errorf("slice targets %+v on %v", ref, slice.Endpoints[0].NodeName)
	}
	a.ready.Store(true)
	waitPod(t, cs, lns, "demo-0", "Ready", ready)
	waitSlice(t, cs, lns, "ready", func(s *discoveryv1.EndpointSlice) bool { return *s.Endpoints[0].Conditions.Ready })
	get(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports["web"]))

	// The volume follows the Secret.
	secret.Data["tls.crt"] = []byte("two")
	_, err = cs.CoreV1().Secrets(lns).Update(ctx, secret, metav1.UpdateOptions{})
	must(t, err)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(filepath.Join(certDir, "tls.crt"))
		return string(b) == "two", nil
	})
	must(t, err)

	// A crash restarts the container.
	a.crash(0)
	if c := a.container(t, 1); c.RestartCount != 1 {
		t.Errorf("second start has restart count %d", c.RestartCount)
	}
	waitPod(t, cs, lns, "demo-0", "restarted and Ready", func(p *corev1.Pod) bool {
		s := p.Status.ContainerStatuses
		return ready(p) && len(s) == 1 && s[0].RestartCount == 1 &&
			s[0].LastTerminationState.Terminated != nil && s[0].LastTerminationState.Terminated.ExitCode == 1
	})

	// Deletion: terminating endpoints while the container stops, with the
	// Pod's grace period; then the Pod and its slice are gone.
	must(t, cs.CoreV1().Pods(lns).Delete(ctx, "demo-0", metav1.DeleteOptions{}))
	waitSlice(t, cs, lns, "terminating", func(s *discoveryv1.EndpointSlice) bool {
		c := s.Endpoints[0].Conditions
		return !*c.Ready && *c.Serving && *c.Terminating
	})
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, eventually, true, func(context.Context) (bool, error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.running[1].grace == 3*time.Second, nil
	})
	must(t, err)
	if _, err := cs.CoreV1().Pods(lns).Get(ctx, "demo-0", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Pod is gone before its container stopped: %v", err)
	}
	close(a.release)
	waitPod(t, cs, lns, "demo-0", "deleted", nil)
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(lns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelManagedBy + "=" + kubelet.EndpointSliceManager})
		return err == nil && len(list.Items) == 0, err
	})
	must(t, err)

	// A Pod without a runtime is left as the API server created it.
	o, err := cs.CoreV1().Pods(lns).Get(ctx, "other", metav1.GetOptions{})
	must(t, err)
	if o.Status.Phase != corev1.PodPending || len(o.Status.ContainerStatuses) > 0 || o.Status.StartTime != nil {
		t.Errorf("Pod other has status %+v, want none written", o.Status)
	}
}

// waitPod waits until the Pod satisfies ok, or until it is gone for a
// nil ok.
func waitPod(t *testing.T, cs kubernetes.Interface, namespace, name, what string, ok func(*corev1.Pod) bool) {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if ok == nil {
			return apierrors.IsNotFound(err), nil
		}
		if err != nil {
			return false, err
		}
		last = p
		return ok(p), nil
	})
	if err != nil {
		t.Fatalf("Pod %s not %s: %v; last status %+v", name, what, err, statusOf(last))
	}
}

func statusOf(p *corev1.Pod) any {
	if p == nil {
		return nil
	}
	return p.Status
}

// waitSlice waits for the one slice of Service app in namespace
// kubelet-test to satisfy ok.
func waitSlice(t *testing.T, cs kubernetes.Interface, namespace, what string, ok func(*discoveryv1.EndpointSlice) bool) *discoveryv1.EndpointSlice {
	t.Helper()
	var got *discoveryv1.EndpointSlice
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		list, err := cs.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=app," + discoveryv1.LabelManagedBy + "=" + kubelet.EndpointSliceManager,
		})
		if err != nil {
			return false, err
		}
		if len(list.Items) > 1 {
			return false, errors.New("more than one slice")
		}
		if len(list.Items) == 0 || len(list.Items[0].Endpoints) != 1 {
			return false, nil
		}
		got = &list.Items[0]
		return ok(got), nil
	})
	if err != nil {
		t.Fatalf("the slice is not %s: %v; last %+v", what, err, got)
	}
	return got
}
