package migration

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// counts are the Pods created in one phase, by the terms they got.
type counts struct {
	Pods, OneTerm, TwoTerms, NoTerm, Errors int
	// FailOpen is the rise of apiserver_admission_webhook_fail_open_count
	// over the phase, for both entries' names.
	FailOpen float64
}

func (c *counts) add(o counts) {
	c.Pods += o.Pods
	c.OneTerm += o.OneTerm
	c.TwoTerms += o.TwoTerms
	c.NoTerm += o.NoTerm
	c.Errors += o.Errors
	c.FailOpen += o.FailOpen
}

func (c counts) String() string {
	return fmt.Sprintf("%d Pods, %d with two terms, %d without the term, fail-open +%.0f, %d create errors",
		c.Pods, c.TwoTerms, c.NoTerm, c.FailOpen, c.Errors)
}

// load creates Pods in a Kyma-managed namespace at a steady rate, as
// module operators and their workloads do, and counts for every Pod the
// terms for the Kyma pool that the API server's answer carries: what the
// webhooks did to it. Each Pod is deleted once counted; its scheduler
// does not exist, so none is bound.
type load struct {
	client    kubernetes.Interface
	namespace string
	interval  time.Duration

	mu     sync.Mutex
	phase  string
	counts map[string]*counts
	order  []string
	errs   []error

	seq  atomic.Int64
	wg   sync.WaitGroup
	stop context.CancelFunc
	done chan struct{}
}

func newLoad(client kubernetes.Interface, namespace string, perSecond int) *load {
	return &load{client: client, namespace: namespace, interval: time.Second / time.Duration(perSecond), counts: map[string]*counts{}}
}

// setPhase attributes the Pods created from now on to phase.
func (l *load) setPhase(phase string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = phase
	if l.counts[phase] == nil {
		l.counts[phase] = &counts{}
		l.order = append(l.order, phase)
	}
}

// start creates Pods until stopped. A slow API server delays creations
// rather than piling them up: at most 32 are in flight.
func (l *load) start(ctx context.Context) {
	ctx, l.stop = context.WithCancel(ctx)
	l.done = make(chan struct{})
	sem := make(chan struct{}, 32)
	go func() {
		defer close(l.done)
		tick := time.NewTicker(l.interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				l.wg.Wait()
				return
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				continue
			}
			l.mu.Lock()
			phase := l.phase
			l.mu.Unlock()
			l.wg.Add(1)
			go func() {
				defer func() { <-sem; l.wg.Done() }()
				l.createOne(context.WithoutCancel(ctx), phase)
			}()
		}
	}()
}

// finish stops the load and waits for the Pods in flight.
func (l *load) finish() {
	if l.stop != nil {
		l.stop()
		<-l.done
	}
}

func (l *load) createOne(ctx context.Context, phase string) {
	name := fmt.Sprintf("load-%06d", l.seq.Add(1))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "migration-load"}},
		Spec: corev1.PodSpec{
			SchedulerName:                 "migration-load-unscheduled",
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	created, err := l.client.CoreV1().Pods(l.namespace).Create(ctx, pod, metav1.CreateOptions{})
	l.mu.Lock()
	c := l.counts[phase]
	c.Pods++
	if err != nil {
		c.Errors++
		l.errs = append(l.errs, fmt.Errorf("%s: create %s: %w", phase, name, err))
		l.mu.Unlock()
		return
	}
	switch framework.PoolTerms(created, framework.KymaPool) {
	case 0:
		c.NoTerm++
	case 1:
		c.OneTerm++
	default:
		c.TwoTerms++
	}
	l.mu.Unlock()
	_ = l.client.CoreV1().Pods(l.namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
}

// addFailOpen records the fail-open rise of a phase.
func (l *load) addFailOpen(phase string, rise float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[phase].FailOpen += rise
}

// report returns the counts per phase in the order the phases began.
func (l *load) report() (phases []string, byPhase map[string]counts, errs []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byPhase = map[string]counts{}
	for _, p := range l.order {
		byPhase[p] = *l.counts[p]
	}
	return append([]string(nil), l.order...), byPhase, append([]error(nil), l.errs...)
}
