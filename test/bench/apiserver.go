package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// policyAPI is where MutatingAdmissionPolicy is served: GA, and on by
// default, in Kubernetes 1.36.
const policyAPI = "admissionregistration.k8s.io/v1"

// policyAPIServerArgs is what kube-apiserver needs for policyAPI: nothing.
var policyAPIServerArgs []string

// arm is one side of the API-server comparison.
type arm struct {
	name      string // A, B or C
	namespace string
	labels    map[string]string
	// mutated: every Pod must carry exactly the term; otherwise none may.
	mutated bool

	stats     ArmStats
	latencies []time.Duration
}

// apiServerSection measures Pod creation through a real kube-apiserver in
// three arms: A with no mutation, B with the webhook, and C with an
// equivalent MutatingAdmissionPolicy, in interleaved rounds. It fails the
// run unless B and C mutate every Pod and A none.
func (r *runner) apiServerSection(ctx context.Context) error {
	arms := []*arm{
		{name: "A", namespace: "bench-a-plain"},
		{name: "B", namespace: "bench-b-webhook", labels: map[string]string{managedByLabel: "kyma"}, mutated: true},
		{name: "C", namespace: "bench-c-policy", labels: map[string]string{policyLabel: "true"}, mutated: true},
	}
	cs, err := r.startAPIServerBench(ctx, arms)
	if err != nil {
		return err
	}
	term := affinity.DefaultPolicy().Term()
	// The API server picks the configurations up asynchronously: wait until
	// a Pod in each arm comes out as that arm should.
	for _, a := range arms {
		if err := waitForArm(ctx, cs, a, term); err != nil {
			return err
		}
	}
	// The comparison means something only if B and C do the same thing.
	agreed, err := differential(ctx, cs, arms[1].namespace, arms[2].namespace)
	if err != nil {
		return fmt.Errorf("the webhook and the policy of deploy/examples/policy disagree: %w", err)
	}
	r.progress("differential: the webhook and the policy agree on all %d Pods", agreed)
	// A warm-up round per arm: connections, the CEL programs, caches.
	warm := min(r.cfg.Creators*4, r.cfg.Pods/r.cfg.Rounds)
	for _, a := range arms {
		if _, err := createPods(ctx, cs, a, "warm", warm, r.cfg.Creators, term); err != nil {
			return err
		}
		if err := deletePods(ctx, cs, a.namespace); err != nil {
			return err
		}
	}
	res := &APIServerResults{PolicyAPI: policyAPI, APIServerArgs: policyAPIServerArgs, Creators: r.cfg.Creators, Rounds: r.cfg.Rounds, DifferentialCases: agreed}
	if res.Order, err = r.runRounds(ctx, cs, arms, term); err != nil {
		return err
	}
	for _, a := range arms {
		a.summarize()
		r.progress("arm %s (%s): %d Pods, %.0f Pods/s, p50 %.2f ms, p99 %.2f ms, %d with the term",
			a.name, a.namespace, a.stats.Pods, a.stats.PodsPerSecond, a.stats.P50Ms, a.stats.P99Ms, a.stats.WithTerm)
	}
	res.A, res.B, res.C = arms[0].stats, arms[1].stats, arms[2].stats
	res.BOverA, res.COverA, res.BOverC = compare(res.B, res.A), compare(res.C, res.A), compare(res.B, res.C)
	r.res.APIServer = res
	// The outcome the comparison rests on: B and C mutated every Pod, A
	// none. It fails the run.
	var errs []error
	for _, a := range arms {
		errs = append(errs, a.outcome())
	}
	return errors.Join(errs...)
}

// startAPIServerBench starts a control plane that serves policyAPI and the
// webhook, creates the arms' namespaces, the webhook's configuration and
// the policy of deploy/examples/policy, and returns a client that is not
// rate limited.
func (r *runner) startAPIServerBench(ctx context.Context, arms []*arm) (kubernetes.Interface, error) {
	snatchBin, err := process.Build(ctx, "snatch-webhook", r.dir)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(r.dir, "apiserver-webhook-certs")
	_, caPEM, err := writeServingCert(certDir)
	if err != nil {
		return nil, err
	}
	cluster, cs, err := r.startControlPlane(ctx, framework.Options{APIServerArgs: policyAPIServerArgs})
	if err != nil {
		return nil, err
	}
	r.progress("control plane up in %s", cluster.Dir)
	if err := servesPolicies(cs); err != nil {
		return nil, err
	}
	wh, err := r.startWebhook(ctx, "snatch-webhook-apiserver", snatchBin, certDir, -1, noShutdownDelay)
	if err != nil {
		return nil, err
	}
	return cs, createMutations(ctx, cs, arms, wh.url, caPEM)
}

// createMutations creates the arms' namespaces, the webhook's
// configuration and the MutatingAdmissionPolicy with its binding.
func createMutations(ctx context.Context, cs kubernetes.Interface, arms []*arm, url string, caPEM []byte) error {
	for _, a := range arms {
		a.stats.Namespace = a.namespace
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.namespace, Labels: a.labels}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	mwc, err := webhookConfiguration(url, caPEM)
	if err != nil {
		return err
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the webhook configuration: %w", err)
	}
	policy, binding, err := mutatingPolicy()
	if err != nil {
		return err
	}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the MutatingAdmissionPolicy: %w", err)
	}
	if _, err := cs.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the MutatingAdmissionPolicyBinding: %w", err)
	}
	return nil
}

// runRounds creates cfg.Pods Pods in each arm over cfg.Rounds rounds,
// rotating the arms' order every round (ABC, BCA, CAB, ...), and returns
// the orders.
func (r *runner) runRounds(ctx context.Context, cs kubernetes.Interface, arms []*arm, term corev1.PreferredSchedulingTerm) ([]string, error) {
	var orders []string
	perRound := r.cfg.Pods / r.cfg.Rounds
	for round := range r.cfg.Rounds {
		n := perRound
		if round == r.cfg.Rounds-1 {
			n = r.cfg.Pods - perRound*(r.cfg.Rounds-1)
		}
		order := ""
		for i := range arms {
			a := arms[(round+i)%len(arms)]
			order += a.name
			d, err := createPods(ctx, cs, a, "r"+strconv.Itoa(round), n, r.cfg.Creators, term)
			if err != nil {
				return nil, err
			}
			a.stats.Seconds += d.Seconds()
			if err := deletePods(ctx, cs, a.namespace); err != nil {
				return nil, err
			}
		}
		orders = append(orders, order)
		r.progress("round %d/%d (%s): %d Pods per arm", round+1, r.cfg.Rounds, order, n)
	}
	return orders, nil
}

// summarize sets the arm's rate and latency figures from its samples.
func (a *arm) summarize() {
	s := &a.stats
	slices.Sort(a.latencies)
	if s.Seconds > 0 {
		s.PodsPerSecond = float64(s.Pods) / s.Seconds
	}
	s.P50Ms, s.P99Ms = ms(percentile(a.latencies, 50)), ms(percentile(a.latencies, 99))
	if len(a.latencies) > 0 {
		s.MaxMs = ms(a.latencies[len(a.latencies)-1])
	}
}

// outcome is nil when every Pod of a mutated arm, and none of another,
// carries exactly the term, and every create succeeded.
func (a *arm) outcome() error {
	want := 0
	if a.mutated {
		want = a.stats.Pods
	}
	if a.stats.WithTerm != want || a.stats.Errors > 0 {
		return fmt.Errorf("arm %s: %d of %d Pods carry exactly the term, want %d; %d creates failed",
			a.name, a.stats.WithTerm, a.stats.Pods, want, a.stats.Errors)
	}
	return nil
}

// servesPolicies checks that the API server serves MutatingAdmissionPolicy
// in policyAPI.
func servesPolicies(cs kubernetes.Interface) error {
	list, err := cs.Discovery().ServerResourcesForGroupVersion(policyAPI)
	if err != nil {
		return fmt.Errorf("discover %s: %w", policyAPI, err)
	}
	if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "mutatingadmissionpolicies" }) {
		return fmt.Errorf("kube-apiserver does not serve mutatingadmissionpolicies in %s", policyAPI)
	}
	return nil
}

// benchPod is a Pod of an ordinary Deployment: labels, a container with
// resources, probes and a few environment variables, no affinity.
func benchPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{"app.kubernetes.io/name": "bench", "app.kubernetes.io/instance": "bench", "pod-template-hash": "5d8f9c7b6"},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "app"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "europe-docker.pkg.dev/kyma-project/prod/bench:1.2.3",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// hasExactlyTheTerm reports whether the created Pod's affinity is the
// term and nothing else, as both mutations must leave a Pod without one.
func hasExactlyTheTerm(p *corev1.Pod, term corev1.PreferredSchedulingTerm) bool {
	want := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{term},
	}}
	return apiequality.Semantic.DeepEqual(p.Spec.Affinity, want)
}

// createPods creates the Pods <prefix>-0 to <prefix>-<n-1> in the arm's
// namespace with conc creators, until ctx ends, and returns the wall time.
// Latencies, errors and the term are recorded on the arm, except for the
// warm-up (prefix "warm").
func createPods(ctx context.Context, cs kubernetes.Interface, a *arm, prefix string, n, conc int, term corev1.PreferredSchedulingTerm) (time.Duration, error) {
	type created struct {
		lat      time.Duration
		err      error
		withTerm bool
	}
	results := make([]created, n)
	start := time.Now()
	forEach(ctx, n, conc, func(i int) {
		t0 := time.Now()
		pod, err := cs.CoreV1().Pods(a.namespace).Create(ctx, benchPod(prefix+"-"+strconv.Itoa(i)), metav1.CreateOptions{})
		results[i] = created{lat: time.Since(t0), err: err}
		if err == nil {
			results[i].withTerm = hasExactlyTheTerm(pod, term)
		}
	})
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var firstErr error
	failed := 0
	for _, res := range results {
		if res.err != nil {
			failed++
			firstErr = cmp.Or(firstErr, res.err)
		} else if prefix != "warm" {
			a.latencies = append(a.latencies, res.lat)
			if res.withTerm {
				a.stats.WithTerm++
			}
		}
	}
	if prefix == "warm" {
		return elapsed, firstErr
	}
	a.stats.Pods += n
	a.stats.Errors += failed
	if a.stats.Errors > 0 {
		return elapsed, fmt.Errorf("arm %s: %d creates failed, the first with: %w", a.name, a.stats.Errors, firstErr)
	}
	return elapsed, nil
}

// forEach calls do for 0 to n-1, at most conc at a time, and returns once
// they are done; once ctx ends, it skips the rest.
func forEach(ctx context.Context, n, conc int, do func(i int)) {
	var g errgroup.Group
	g.SetLimit(conc)
	for i := range n {
		g.Go(func() error {
			if ctx.Err() == nil {
				do(i)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// deletePods deletes the arm's Pods, so that later rounds do not run
// against a larger etcd. Pods that were never scheduled go at once.
func deletePods(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	pods := cs.CoreV1().Pods(namespace)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete the Pods of %s: %w", namespace, err)
	}
	return poll.Until(ctx, "the Pods of "+namespace+" to go", func(ctx context.Context) error {
		list, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		switch {
		case err != nil:
			return poll.Stop(err)
		case len(list.Items) > 0:
			return fmt.Errorf("the Pod %s is still there", list.Items[0].Name)
		}
		return nil
	}, poll.Timeout(time.Minute))
}

// waitForArm creates probe Pods until one comes out as the arm should:
// with exactly the term in B and C, without in A.
func waitForArm(ctx context.Context, cs kubernetes.Interface, a *arm, term corev1.PreferredSchedulingTerm) error {
	probes := 0
	err := poll.Until(ctx, "arm "+a.name+"'s probe Pods to come out as the arm should", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(a.namespace).Create(ctx, benchPod("probe-"+strconv.Itoa(probes)), metav1.CreateOptions{})
		if err != nil {
			return poll.Stop(fmt.Errorf("create a probe Pod: %w", err))
		}
		probes++
		if hasExactlyTheTerm(p, term) != a.mutated {
			return fmt.Errorf("a probe Pod came out with affinity %+v", p.Spec.Affinity)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return deletePods(ctx, cs, a.namespace)
}
