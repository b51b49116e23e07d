package check

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// TestPodsAreReadInPagesAndNoneIsLost fills a real API server with more
// Pods than three pages hold, and more on each Kyma Node than one page:
// placement and kyma-pool count every one of them, and read them in pages
// of podPageSize that follow continue tokens.
func TestPodsAreReadInPagesAndNoneIsLost(t *testing.T) {
	c := framework.Integration(t, framework.Options{}, "creates Nodes, which needs a cluster started by the framework")
	ctx := context.Background()
	fillPagingCluster(t, c)
	rec := &listRecorder{}
	cfg := rest.CopyConfig(c.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec })
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	checkCfg := Config{
		Namespace:       "kyma-system",
		WebhookSelector: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "snatch-webhook"}),
		PoolLabelKey:    framework.PoolLabel,
		WorkerPool:      framework.KymaPool,
	}
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	pool := checkKymaPool(runCtx, cs, checkCfg)
	// 1m and 1Mi per Pod on the pool, the finished ones aside.
	if want := "2 Nodes, 2 Ready and schedulable; CPU requested 1100m of 8 allocatable, memory 1100Mi of 32Gi"; pool.Status != StatusPass || !strings.Contains(pool.Message, want) {
		t.Errorf("kyma-pool = %s %q, want PASS with %q", pool.Status, pool.Message, want)
	}
	placement := checkPlacement(runCtx, cs, checkCfg)
	if want := fmt.Sprintf("%d Kyma Pods in 1 namespaces: 0 lack the term, %d carry it but run off pool %s", pagingOnPool+pagingOffPool, pagingOffPool, framework.KymaPool); placement.Status != StatusWarn || !strings.Contains(placement.Message, want) {
		t.Errorf("placement = %s %q, want WARN with %q", placement.Status, placement.Message, want)
	}
	if len(placement.Details) != pagingOffPool {
		t.Errorf("placement details = %q, want the %d Pods off the pool", placement.Details, pagingOffPool)
	}

	assertPaged(t, rec, pagingOnPool+pagingOffPool+pagingFinished+pagingOthers)
}

// The Pods of the paging test: 1,100 Kyma Pods on the pool, 550 on each
// Node; 3 off it; 5 finished ones on the pool, which count nowhere; 200
// customer Pods.
const pagingOnPool, pagingOffPool, pagingFinished, pagingOthers = 1100, 3, 5, 200

// fillPagingCluster creates two Kyma Nodes and a customer Node, a Kyma and
// a customer namespace, and the Pods of the paging test on them.
func fillPagingCluster(t *testing.T, c *framework.Cluster) {
	ctx := context.Background()
	kyma, err := c.CreateNodes(ctx, framework.KymaPool, 2)
	must(t, err)
	customer, err := c.CreateNodes(ctx, framework.CustomerPool, 1)
	must(t, err)
	const kymaNS, customerNS = "paging-kyma", "paging-customer"
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: kymaNS, Labels: map[string]string{ManagedByLabel: ManagedByValue}}},
		{ObjectMeta: metav1.ObjectMeta{Name: customerNS}},
	} {
		_, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		must(t, err)
	}

	term := affinity.DefaultPolicy().Term()
	var pods []*corev1.Pod
	for i := range pagingOnPool {
		pods = append(pods, pagingPod(kymaNS, "on-"+strconv.Itoa(i), kyma[i%2].Name, &term))
	}
	for i := range pagingOffPool {
		pods = append(pods, pagingPod(kymaNS, "off-"+strconv.Itoa(i), customer[0].Name, &term))
	}
	for i := range pagingOthers {
		pods = append(pods, pagingPod(customerNS, "other-"+strconv.Itoa(i), customer[0].Name, nil))
	}
	createAll(t, c.Clientset, pods)
	for i := range pagingFinished {
		p := pagingPod(kymaNS, "done-"+strconv.Itoa(i), kyma[0].Name, &term)
		created, err := c.Clientset.CoreV1().Pods(kymaNS).Create(ctx, p, metav1.CreateOptions{})
		must(t, err)
		created.Status.Phase = corev1.PodSucceeded
		_, err = c.Clientset.CoreV1().Pods(kymaNS).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		must(t, err)
	}

}

// assertPaged holds the recorded Pod lists to the page size: every list of
// all namespaces' Pods asked for a page, and each followed continue tokens
// to the end.
func assertPaged(t *testing.T, rec *listRecorder, all int) {
	t.Helper()
	var cluster, perNode, continued int
	for _, q := range rec.queries() {
		if q.Get("limit") != strconv.Itoa(podPageSize) {
			t.Errorf("a Pod list without a page size: %s", q.Encode())
		}
		if q.Get("continue") != "" {
			continued++
		}
		if strings.Contains(q.Get("fieldSelector"), "spec.nodeName=") {
			perNode++
		} else {
			cluster++
		}
	}
	if want := (all + podPageSize - 1) / podPageSize; cluster != want {
		t.Errorf("%d pages of every Pod, want %d for %d Pods", cluster, want, all)
	}
	// Each Kyma Node holds 550 unfinished Pods: two pages, for each item.
	if want := 2 * 2 * 2; perNode != want {
		t.Errorf("%d pages of the Kyma Nodes' Pods, want %d", perNode, want)
	}
	if want := cluster - 1 + 2*2; continued != want {
		t.Errorf("%d lists followed a continue token, want %d", continued, want)
	}
}

func pagingPod(namespace, name, node string, term *corev1.PreferredSchedulingTerm) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "app", Image: "app:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("1Mi")},
			}}},
		},
	}
	if term != nil {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{*term},
		}}
	}
	return p
}

// createAll creates the Pods with a few clients at once.
func createAll(t *testing.T, cs kubernetes.Interface, pods []*corev1.Pod) {
	t.Helper()
	next := make(chan *corev1.Pod)
	errs := make(chan error, len(pods))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for p := range next {
				if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, p := range pods {
		next <- p
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// listRecorder keeps the query of every request that lists the Pods of
// every namespace.
type listRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	qs   []url.Values
}

func (r *listRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.URL.Path == "/api/v1/pods" {
		r.mu.Lock()
		r.qs = append(r.qs, req.URL.Query())
		r.mu.Unlock()
	}
	return r.next.RoundTrip(req)
}

func (r *listRecorder) queries() []url.Values {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]url.Values(nil), r.qs...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
