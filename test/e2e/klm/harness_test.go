package klm_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// waitTimeout bounds each wait for an outcome; the outcome is asserted,
// not how long it took.
const waitTimeout = 90 * time.Second

// fast returns intervals that let a test see several reconciles in a short
// run. Ready is requeued after an hour, so that only a test that wants the
// periodic reconcile of a Ready Manifest sees it.
func fast() klm.Intervals {
	return klm.Intervals{
		Success: time.Hour, Busy: 200 * time.Millisecond, Warning: 200 * time.Millisecond,
		Error: 200 * time.Millisecond, FailureBase: 50 * time.Millisecond, FailureMax: 500 * time.Millisecond,
		Mandatory: time.Hour,
	}
}

// env is one control plane, which is both the stand-in's control plane and
// its runtime, shared by the subtests of a test.
type env struct {
	c   *framework.Cluster
	cs  kubernetes.Interface
	dyn dynamic.Interface
	cl  client.Client // with the stand-in's kinds
	seq atomic.Int32
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c := framework.Integration(t, framework.Options{}, "")
	must(t, klm.InstallCRDs(t.Context(), c.Config))
	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, klm.AddToScheme(scheme))
	cl, err := client.New(c.Config, client.Options{Scheme: scheme})
	must(t, err)
	return &env{c: c, cs: c.Clientset, dyn: dynamic.NewForConfigOrDie(c.Config), cl: cl}
}

// fixture is one subtest's world: a control-plane namespace with its
// templates and the Manifest, a runtime namespace the layers fill, and a
// KLM watching the first.
type fixture struct {
	*env
	t        *testing.T
	kcp, skr string // namespaces
	module   string
	klm      *klm.KLM
	key      types.NamespacedName // of the Manifest
}

// start gives t its namespaces and a KLM with iv, stopped when t ends.
func (e *env) start(t *testing.T, iv klm.Intervals) *fixture {
	t.Helper()
	n := e.seq.Add(1)
	f := &fixture{env: e, t: t, kcp: fmt.Sprintf("kcp-%d", n), skr: fmt.Sprintf("skr-%d", n), module: "snatch"}
	f.key = types.NamespacedName{Namespace: f.kcp, Name: "kyma-" + f.module}
	for _, ns := range []string{f.kcp, f.skr} {
		_, err := e.cs.CoreV1().Namespaces().Create(t.Context(),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		must(t, err)
	}
	k, err := klm.Start(context.WithoutCancel(t.Context()), klm.Options{
		ControlPlane: e.c.Config, Runtime: e.c.Config, Namespace: f.kcp, Intervals: iv,
	})
	must(t, err)
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stop the stand-in: %v", err)
		}
	})
	f.klm = k
	return f
}

// publish writes the template of version, the YAML documents docs.
func (f *fixture) publish(version string, docs ...string) {
	f.t.Helper()
	must(f.t, klm.PublishTemplate(f.t.Context(), f.cs, f.kcp, f.module, version, []byte(strings.Join(docs, "\n---\n"))))
}

// create creates the Manifest at version with labels, and spec's other
// fields from with, if given.
func (f *fixture) create(version string, labels map[string]string, with ...func(*klm.ManifestSpec)) {
	f.t.Helper()
	m := &klm.Manifest{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name, Labels: labels},
		Spec:       klm.ManifestSpec{Module: f.module, Version: version},
	}
	for _, w := range with {
		w(&m.Spec)
	}
	must(f.t, f.cl.Create(f.t.Context(), m))
}

// patch changes the Manifest with change, a merge patch.
func (f *fixture) patch(change func(*klm.Manifest)) {
	f.t.Helper()
	m := f.manifest()
	p := client.MergeFrom(m.DeepCopy())
	change(m)
	must(f.t, f.cl.Patch(f.t.Context(), m, p))
}

// bump sets the Manifest's version.
func (f *fixture) bump(version string) {
	f.t.Helper()
	f.patch(func(m *klm.Manifest) { m.Spec.Version = version })
}

func (f *fixture) manifest() *klm.Manifest {
	f.t.Helper()
	m := &klm.Manifest{}
	must(f.t, f.cl.Get(f.t.Context(), f.key, m))
	return m
}

// waitManifest waits until ok holds for the Manifest, and returns it.
func (f *fixture) waitManifest(what string, ok func(*klm.Manifest) bool) *klm.Manifest {
	f.t.Helper()
	var last klm.Manifest
	poll.Eventually(f.t, "the Manifest "+what, func(ctx context.Context) error {
		var m klm.Manifest
		if err := f.cl.Get(ctx, f.key, &m); err != nil {
			return poll.Stop(err)
		}
		if last = m; !ok(&m) {
			return fmt.Errorf("spec %+v, status %+v", m.Spec, m.Status)
		}
		return nil
	}, poll.Timeout(waitTimeout))
	return &last
}

// waitReady waits until the Manifest is Ready with version synced in full.
func (f *fixture) waitReady(version string) *klm.Manifest {
	f.t.Helper()
	return f.waitManifest("Ready at "+version, func(m *klm.Manifest) bool { return m.ReadyAt(version) })
}

// waitPasses waits until the stand-in has finished n more reconciles of
// the Manifest than it had when called, so that what a test then finds
// unchanged has been looked at again.
func (f *fixture) waitPasses(n int) {
	f.t.Helper()
	want := f.klm.Passes(f.key) + n
	poll.Eventually(f.t, fmt.Sprintf("%d more reconciles", n), func(context.Context) error {
		if got := f.klm.Passes(f.key); got < want {
			return fmt.Errorf("%d reconciles, want %d", got, want)
		}
		return nil
	}, poll.Timeout(waitTimeout))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
