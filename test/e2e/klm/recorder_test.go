package klm_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// A change is one watch event on the runtime: what happened to which
// object, at which resourceVersion.
type change struct {
	kind, name string
	typ        watch.EventType
	rv         uint64
	version    string // spec.version, of a Manifest
}

// recorder records the watch events of resources in a namespace from the
// moment it starts. It is the tests' oracle of order: kube-apiserver takes
// every resourceVersion from etcd's one revision counter, so the versions
// of events on one API server order them, across kinds too.
type recorder struct {
	mu      sync.Mutex
	changes []change
}

// record starts watching resources in ns until the test ends.
func (f *fixture) record(ns string, resources ...schema.GroupVersionResource) *recorder {
	f.t.Helper()
	r := &recorder{}
	var wg sync.WaitGroup
	f.t.Cleanup(wg.Wait) // after every w.Stop: cleanups run last first
	for _, gvr := range resources {
		w, err := f.dyn.Resource(gvr).Namespace(ns).Watch(f.t.Context(), metav1.ListOptions{ResourceVersion: "0"})
		must(f.t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.drain(w)
		}()
		f.t.Cleanup(w.Stop)
	}
	return r
}

func (r *recorder) drain(w watch.Interface) {
	for ev := range w.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		rv, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
		if err != nil {
			continue
		}
		r.mu.Lock()
		version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
		r.changes = append(r.changes, change{kind: u.GetKind(), name: u.GetName(), typ: ev.Type, rv: rv, version: version})
		r.mu.Unlock()
	}
}

// is matches the events of typ on kind/name.
func is(kind, name string, typ watch.EventType) func(change) bool {
	return func(c change) bool { return c.kind == kind && c.name == name && c.typ == typ }
}

// first returns the earliest recorded event that matches.
func (r *recorder) first(match func(change) bool) (change, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var found *change
	for i, c := range r.changes {
		if match(c) && (found == nil || c.rv < found.rv) {
			found = &r.changes[i]
		}
	}
	if found == nil {
		return change{}, false
	}
	return *found, true
}

// event waits until r has recorded an event that matches, and returns the
// earliest. Each watch delivers its events in order, so the earliest of
// one kind is known once one has arrived.
func (f *fixture) event(r *recorder, what string, match func(change) bool) change {
	f.t.Helper()
	var c change
	poll.Eventually(f.t, what, func(context.Context) error {
		var ok bool
		if c, ok = r.first(match); !ok {
			return fmt.Errorf("none of %d events recorded matches", r.len())
		}
		return nil
	}, poll.Timeout(waitTimeout))
	return c
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.changes)
}

// before fails t unless a happened before b.
func before(t *testing.T, a, b change) {
	t.Helper()
	if a.rv >= b.rv {
		t.Errorf("%s %s %s (resourceVersion %d) did not come before %s %s %s (%d)",
			a.typ, a.kind, a.name, a.rv, b.typ, b.kind, b.name, b.rv)
	}
}
