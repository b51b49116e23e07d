package check_test

import (
	"errors"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

// addLegacyEntry adds a second entry like the first, as configurations
// that still call kim-snatch's old path have.
func addLegacyEntry(in *checktest.Install) {
	legacy := *in.MWC.Webhooks[0].DeepCopy()
	legacy.Name = "pods-legacy.kim-snatch.kyma-project.io"
	in.MWC.Webhooks = append(in.MWC.Webhooks, legacy)
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	all := map[string]string{corev1.LabelMetadataName: name}
	for k, v := range labels {
		all[k] = v
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all}}
}

// withTerm gives p the webhook's term, as a Kyma Pod created through it has.
func withTerm(p *corev1.Pod) *corev1.Pod {
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{affinity.DefaultPolicy().Term()},
	}}
	return p
}

// requesting is a Running Pod on node that requests cpu and memory.
func requesting(namespace, name, node, cpu, memory string) *corev1.Pod {
	p := checktest.RunningPod(namespace, name, nil)
	p.Spec.NodeName = node
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return p
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// deny makes the fake API server refuse verb on resource with err.
func deny(verb, resource string, err error) func(*fake.Clientset) {
	return func(cs *fake.Clientset) {
		cs.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
	}
}

// forbidden is the API server's 403 for resource.
func forbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("no RBAC"))
}

// poolTerm is a preferred term on the pool key for pool, with weight.
func poolTerm(pool string, weight int32) corev1.PreferredSchedulingTerm {
	p := affinity.DefaultPolicy()
	p.WorkerPool, p.Weight = pool, weight
	return p.Term()
}

// admitTerms makes the fake API server answer a Pod create with terms, as
// the webhooks in its way would have added them.
func admitTerms(terms ...corev1.PreferredSchedulingTerm) func(*fake.Clientset) {
	return func(cs *fake.Clientset) {
		cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
			return true, p, nil
		})
	}
}
