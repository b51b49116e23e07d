package kubelet

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/e2e/projector"
)

// minimumGracePeriod is the kubelet's floor for a container's grace
// period, which a deletion with grace 0 or 1 gets.
const minimumGracePeriod = 2 * time.Second

// retryInterval is how soon a failed volume mount, token request or
// status write is tried again.
const retryInterval = time.Second

// podWorker runs one Pod, as the kubelet's pod worker does: it mounts
// the volumes, starts the containers, restarts them as the restartPolicy
// says, reports the status, and on deletion stops the containers and
// confirms the deletion.
type podWorker struct {
	k               *Kubelet
	uid             types.UID
	namespace, name string
	dir             string
	ports           *portMap

	// mu guards the fields up to the channels, which the informer's
	// handlers and the endpoints read too; the fields after the channels
	// belong to run.
	mu       sync.Mutex
	latest   *corev1.Pod
	removed  bool // gone from the API
	admitted bool
	final    bool // every container stopped for good
	zone     string

	wake   chan struct{}
	events chan event
	quit   chan struct{}

	containers []*containerState
	startTime  metav1.Time
	prepared   bool
	volumes    map[string]string // volume name → directory
	projectors []context.CancelFunc
	tokenDone  bool
	saConfig   *rest.Config
	saClient   kubernetes.Interface
	kubeconfig string
	hostIPs    []string
	retryAt    time.Time
	lastErr    string
	status     statusState
}

type containerState struct {
	spec    *corev1.Container
	runtime Runtime
	run     *containerRun
	// starts counts the successful starts; the restart count is one less.
	starts  int
	crashes int       // exits in a row, for the backoff
	startAt time.Time // no start before this
	final   bool      // never started again
	waiting struct{ reason, message string }
	// terminated is the state of a container that is final; last is the
	// state of the run before the current one.
	terminated, last *corev1.ContainerStateTerminated
}

type containerRun struct {
	id          int
	running     Running
	startedAt   metav1.Time
	ready       bool
	stopProbe   context.CancelFunc
	containerID string
}

// event is a container's exit or a change of its readiness.
type event struct {
	container, run int
	exited, ready  bool
}

func newPodWorker(k *Kubelet, pod *corev1.Pod) *podWorker {
	w := &podWorker{
		k: k, uid: pod.UID, namespace: pod.Namespace, name: pod.Name, latest: pod,
		dir:     filepath.Join(k.opts.Dir, "pods", pod.Namespace+"_"+pod.Name+"_"+string(pod.UID)),
		ports:   &portMap{},
		wake:    make(chan struct{}, 1),
		events:  make(chan event, 16),
		quit:    make(chan struct{}),
		volumes: map[string]string{},
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		w.containers = append(w.containers, &containerState{spec: c.DeepCopy(), runtime: k.opts.Runtimes[ImageName(c.Image)]})
	}
	return w
}

// update hands the worker the Pod as the API has it now.
func (w *podWorker) update(pod *corev1.Pod, removed bool) {
	w.mu.Lock()
	w.latest = pod
	w.removed = w.removed || removed
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *podWorker) snapshot() (*corev1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest, w.removed
}

func (w *podWorker) endpointInfo() (podEndpointInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return podEndpointInfo{ports: w.ports, zone: w.zone}, w.admitted && !w.final
}

func (w *podWorker) logf(format string, args ...any) {
	w.k.opts.Logf("kubelet: Pod %s/%s: "+format, append([]any{w.namespace, w.name}, args...)...)
}

// send delivers ev to run, unless the worker has ended.
func (w *podWorker) send(ev event) {
	select {
	case w.events <- ev:
	case <-w.quit:
	}
}

func (w *podWorker) run(ctx context.Context) {
	podCtx, cancel := context.WithCancel(ctx) // the Secret projectors
	defer func() {
		for _, stop := range w.projectors {
			stop()
		}
		cancel()
		close(w.quit)
		w.k.finish(w)
	}()
	pod, _ := w.snapshot()
	if err := w.admit(pod); err != nil {
		w.logf("not admitted: %v", err)
		return
	}
	w.k.endpoints.enqueueAll()
	for {
		pod, removed := w.snapshot()
		switch {
		case ctx.Err() != nil:
			w.stopAll(pod, "the kubelet stops")
			return
		case removed:
			w.stopAll(pod, "the Pod was removed")
			return
		case pod.DeletionTimestamp != nil:
			w.terminate(ctx, pod)
			return
		}
		w.sync(ctx, podCtx, pod)
		w.writeStatus(ctx, pod)
		timer := time.NewTimer(w.nextWake())
		select {
		case <-ctx.Done():
		case <-w.wake:
		case ev := <-w.events:
			w.handle(pod, ev)
		case <-timer.C:
		}
		timer.Stop()
	}
}

// admit allocates the Pod's declared and probed ports, so that its
// endpoints can name them before the containers start, and its directory.
func (w *podWorker) admit(pod *corev1.Pod) error {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if _, err := w.ports.actual(p.ContainerPort); err != nil {
				return err
			}
		}
		if n, ok := probePort(&c); ok {
			if _, err := w.ports.actual(n); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(w.dir, "logs"), 0o755); err != nil {
		return err
	}
	w.startTime = metav1.Now()
	w.mu.Lock()
	w.admitted = true
	w.mu.Unlock()
	w.logf("admitted on Node %s", pod.Spec.NodeName)
	return nil
}

// probePort is the container port the readiness probe of c targets, if
// any.
func probePort(c *corev1.Container) (int32, bool) {
	switch p := c.ReadinessProbe; {
	case p == nil:
	case p.HTTPGet != nil:
		return containerPort(c, p.HTTPGet.Port)
	case p.TCPSocket != nil:
		return containerPort(c, p.TCPSocket.Port)
	}
	return 0, false
}

// nextWake is how long run may wait for news before a due start or
// retry.
func (w *podWorker) nextWake() time.Duration {
	next := time.Hour
	now := time.Now()
	for _, at := range []time.Time{w.retryAt, w.status.retryAt} {
		if !at.IsZero() {
			next = min(next, at.Sub(now))
		}
	}
	for _, c := range w.containers {
		if c.run == nil && !c.final && w.prepared {
			next = min(next, c.startAt.Sub(now))
		}
	}
	return max(next, 0)
}

// sync mounts the volumes and gets the token until that succeeds, then
// starts every container that is due.
func (w *podWorker) sync(ctx, podCtx context.Context, pod *corev1.Pod) {
	now := time.Now()
	if now.Before(w.retryAt) {
		return
	}
	w.retryAt = time.Time{}
	if !w.prepared {
		if err := w.prepare(ctx, podCtx, pod); err != nil {
			if msg := err.Error(); msg != w.lastErr {
				w.lastErr = msg
				w.logf("volumes or token not ready: %v", err)
			}
			w.retryAt = now.Add(retryInterval)
			return
		}
		w.prepared = true
	}
	for i, c := range w.containers {
		if c.run == nil && !c.final && !now.Before(c.startAt) {
			w.start(ctx, pod, i)
		}
	}
}

// prepare does what the kubelet does before it starts containers: it
// learns the Node's addresses, mounts the Secret and emptyDir volumes,
// and gets the ServiceAccount token if it is mounted. Each finished step
// is kept when a later one fails.
func (w *podWorker) prepare(ctx, podCtx context.Context, pod *corev1.Pod) error {
	if w.hostIPs == nil {
		w.hostIPs = []string{}
		if node, err := w.k.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{}); err == nil {
			for _, a := range node.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					w.hostIPs = append(w.hostIPs, a.Address)
				}
			}
			w.mu.Lock()
			w.zone = node.Labels[corev1.LabelTopologyZone]
			w.mu.Unlock()
		}
	}
	for _, v := range pod.Spec.Volumes {
		if _, ok := w.volumes[v.Name]; ok {
			continue
		}
		dir := filepath.Join(w.dir, "volumes", v.Name)
		switch {
		case v.Secret != nil:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			p := projector.New(w.k.client, pod.Namespace, v.Secret.SecretName, w.k.opts.ProjectionDelay, dir)
			pctx, cancel := context.WithCancel(podCtx)
			if err := p.Start(pctx); err != nil {
				cancel()
				return fmt.Errorf("volume %s: %w", v.Name, err)
			}
			w.projectors = append(w.projectors, cancel)
		case v.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		default:
			continue // not mounted: its mount path stays as it is
		}
		w.volumes[v.Name] = dir
	}
	if !w.tokenDone {
		mounted, err := w.k.tokenMounted(ctx, pod)
		if err != nil {
			return err
		}
		if mounted {
			path := filepath.Join(w.dir, "kubeconfig")
			cfg, err := w.k.serviceAccountConfig(ctx, pod, path)
			if err != nil {
				return err
			}
			if w.saClient, err = kubernetes.NewForConfig(cfg); err != nil {
				return err
			}
			w.saConfig, w.kubeconfig = cfg, path
		}
		w.tokenDone = true
	}
	return nil
}

// backoff is the delay before the start after the n-th exit in a row.
func (w *podWorker) backoff(n int) time.Duration {
	return w.k.opts.RestartBackoff << min(max(n-1, 0), 5)
}

// start starts container i.
func (w *podWorker) start(ctx context.Context, pod *corev1.Pod, i int) {
	c := w.containers[i]
	ctr, err := w.container(ctx, pod, c)
	if err != nil {
		c.waiting.reason, c.waiting.message = "CreateContainerConfigError", err.Error()
		c.startAt = time.Now().Add(retryInterval)
		w.logf("container %s: %v", c.spec.Name, err)
		return
	}
	running, err := c.runtime.Start(ctx, ctr)
	if err != nil {
		c.waiting.reason, c.waiting.message = "RunContainerError", err.Error()
		c.crashes++
		c.startAt = time.Now().Add(w.backoff(c.crashes))
		w.logf("container %s: start: %v", c.spec.Name, err)
		return
	}
	c.starts++
	probeCtx, stopProbe := context.WithCancel(ctx)
	run := &containerRun{
		id: c.starts, running: running, startedAt: metav1.Now(), stopProbe: stopProbe,
		containerID: "stand-in://" + string(w.uid) + "/" + c.spec.Name + "/" + strconv.Itoa(c.starts),
	}
	c.run, c.waiting.reason, c.waiting.message = run, "", ""
	w.logf("container %s started (restart count %d)", c.spec.Name, c.starts-1)
	go func() {
		select {
		case <-running.Done():
			w.send(event{container: i, run: run.id, exited: true})
		case <-w.quit:
		}
	}()
	pr := newProber(c.spec, w.ports, w.k.opts.MaxProbePeriod)
	go pr.run(probeCtx, func(ready bool) { w.send(event{container: i, run: run.id, ready: ready}) })
}

// container resolves c for a start: environment, arguments, ports,
// volume directories and credentials.
func (w *podWorker) container(ctx context.Context, pod *corev1.Pod, c *containerState) (*Container, error) {
	env, envMap, err := envResolver{client: w.k.client, pod: pod}.resolve(ctx, c.spec)
	if err != nil {
		return nil, err
	}
	var mounts []mount
	mountMap := map[string]string{}
	for _, vm := range c.spec.VolumeMounts {
		dir, ok := w.volumes[vm.Name]
		if !ok {
			continue
		}
		if vm.SubPath != "" {
			dir = filepath.Join(dir, vm.SubPath)
		}
		mounts = append(mounts, mount{path: vm.MountPath, dir: dir})
		mountMap[vm.MountPath] = dir
	}
	slices.SortFunc(mounts, func(a, b mount) int { return cmp.Compare(len(b.path), len(a.path)) })
	rewrite := func(in []string) ([]string, error) {
		out := make([]string, 0, len(in))
		for _, a := range in {
			a, err := rewriteArg(expand(a, envMap), w.ports)
			if err != nil {
				return nil, err
			}
			out = append(out, rewritePaths(a, mounts))
		}
		return out, nil
	}
	ctr := &Container{
		Pod: pod.DeepCopy(), Spec: *c.spec.DeepCopy(), Mounts: mountMap,
		Config: w.saConfig, Client: w.saClient, Kubeconfig: w.kubeconfig,
		LogPath:      filepath.Join(w.dir, "logs", fmt.Sprintf("%s-%d.log", c.spec.Name, c.starts)),
		RestartCount: c.starts,
	}
	if ctr.Command, err = rewrite(c.spec.Command); err != nil {
		return nil, err
	}
	if ctr.Args, err = rewrite(c.spec.Args); err != nil {
		return nil, err
	}
	for _, kv := range env {
		ctr.Env = append(ctr.Env, rewritePaths(kv, mounts))
	}
	ctr.Env = append(ctr.Env, "HOSTNAME="+cmp.Or(pod.Spec.Hostname, pod.Name))
	if w.kubeconfig != "" {
		ctr.Env = append(ctr.Env, "KUBECONFIG="+w.kubeconfig)
	}
	ctr.Ports = w.ports.snapshot()
	return ctr, nil
}

// handle applies a container's exit or readiness change.
func (w *podWorker) handle(pod *corev1.Pod, ev event) {
	c := w.containers[ev.container]
	if c.run == nil || c.run.id != ev.run {
		return // of an earlier start
	}
	if !ev.exited {
		c.run.ready = ev.ready
		return
	}
	term := w.ended(c)
	policy := cmp.Or(pod.Spec.RestartPolicy, corev1.RestartPolicyAlways)
	if policy == corev1.RestartPolicyNever || policy == corev1.RestartPolicyOnFailure && term.ExitCode == 0 {
		c.terminated = term
		c.final = true
		w.logf("container %s exited with code %d; not restarted (restartPolicy %s)", c.spec.Name, term.ExitCode, policy)
		if !slices.ContainsFunc(w.containers, func(c *containerState) bool { return !c.final }) {
			w.mu.Lock()
			w.final = true
			w.mu.Unlock()
			w.k.endpoints.enqueueAll()
		}
		return
	}
	if term.FinishedAt.Sub(term.StartedAt.Time) > w.backoff(6) {
		c.crashes = 0
	}
	c.crashes++
	delay := w.backoff(c.crashes)
	c.last = term
	c.startAt = time.Now().Add(delay)
	c.waiting.reason = "CrashLoopBackOff"
	c.waiting.message = fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", delay, c.spec.Name, w.name, w.namespace, w.uid)
	w.logf("container %s exited with code %d; restarting in %s", c.spec.Name, term.ExitCode, delay)
}

// ended records that the current run of c has exited and returns its
// terminated state.
func (w *podWorker) ended(c *containerState) *corev1.ContainerStateTerminated {
	run := c.run
	run.stopProbe()
	code := run.running.ExitCode()
	term := &corev1.ContainerStateTerminated{
		ExitCode: int32(code), //nolint:gosec // an exit code
		Reason:   "Completed", StartedAt: run.startedAt, FinishedAt: metav1.Now(), ContainerID: run.containerID,
	}
	if code != 0 {
		term.Reason = "Error"
	}
	c.run = nil
	return term
}

// gracePeriod is how long the containers get between SIGTERM and
// SIGKILL: the deletion's grace period, else the Pod's, at least the
// kubelet's minimum.
func gracePeriod(pod *corev1.Pod) time.Duration {
	s := ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
	if pod.DeletionGracePeriodSeconds != nil {
		s = *pod.DeletionGracePeriodSeconds
	}
	return max(time.Duration(s)*time.Second, minimumGracePeriod)
}

// stopAll stops every running container at once, each with the Pod's
// grace period, waits for them, and marks every container final.
func (w *podWorker) stopAll(pod *corev1.Pod, why string) {
	grace := gracePeriod(pod)
	var wg sync.WaitGroup
	for _, c := range w.containers {
		if c.run != nil {
			c.run.stopProbe()
			w.logf("stopping container %s with grace period %s: %s", c.spec.Name, grace, why)
			wg.Go(func() { c.run.running.Stop(grace) })
		}
	}
	wg.Wait()
	for _, c := range w.containers {
		if c.run != nil {
			c.terminated = w.ended(c)
		} else if !c.final && c.last != nil {
			c.terminated = c.last
		}
		c.final = true
	}
	w.mu.Lock()
	w.final = true
	w.mu.Unlock()
	w.k.endpoints.enqueueAll()
}

// terminate ends a Pod that is being deleted, as the kubelet does: the
// containers get SIGTERM at once (the endpoints turn terminating as the
// Pod's deletionTimestamp reaches them), SIGKILL after the grace period;
// then the final status is written and the deletion confirmed with grace
// 0 and the Pod's UID as precondition, so that a new Pod of the same name
// is never deleted instead.
func (w *podWorker) terminate(ctx context.Context, pod *corev1.Pod) {
	w.stopAll(pod, "the Pod is being deleted")
	w.writeStatus(ctx, pod)
	uid := w.uid
	err := wait.PollUntilContextTimeout(ctx, retryInterval, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := w.k.client.CoreV1().Pods(w.namespace).Delete(ctx, w.name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		switch {
		case err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			return true, nil
		default:
			w.logf("confirm deletion: %v", err)
			return false, nil
		}
	})
	if err != nil {
		w.logf("deletion not confirmed: %v", err)
		return
	}
	w.logf("deleted")
}
