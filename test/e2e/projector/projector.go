// Package projector stands in for the kubelet's Secret volume in the local
// environment: it watches one Secret and writes its data into directories,
// one per webhook replica, with the kubelet's atomic ..data swap and a
// delay like the kubelet's sync period.
package projector

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// Projector mirrors one Secret into directories.
type Projector struct {
	client          kubernetes.Interface
	namespace, name string
	dirs            []string
	delay           time.Duration

	queue chan update

	mu      sync.Mutex
	written string // resourceVersion last written
	err     error  // last write error
	changed chan struct{}
}

type update struct {
	due             time.Time
	resourceVersion string
	data            map[string][]byte
}

// New returns a projector of Secret namespace/name into dirs. Changes are
// written delay after they are seen; the first content is written at once,
// as the kubelet mounts a volume before it starts the container.
func New(client kubernetes.Interface, namespace, name string, delay time.Duration, dirs ...string) *Projector {
	return &Projector{
		client: client, namespace: namespace, name: name, dirs: dirs, delay: delay,
		queue:   make(chan update, 1024),
		changed: make(chan struct{}),
	}
}

// Start watches the Secret until ctx ends. It returns once the Secret's
// current content has been written, or with an error if that fails.
func (p *Projector) Start(ctx context.Context) error {
	lw := cache.NewListWatchFromClient(p.client.CoreV1().RESTClient(), "secrets", p.namespace,
		fields.OneTermEqualSelector("metadata.name", p.name))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	first := true
	var firstMu sync.Mutex
	enqueue := func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok {
			return
		}
		u := update{resourceVersion: s.ResourceVersion, data: maps.Clone(s.Data)}
		firstMu.Lock()
		if first {
			first = false
		} else {
			u.due = time.Now().Add(p.delay)
		}
		firstMu.Unlock()
		p.queue <- u
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		// A deleted Secret leaves the mounted files as they were.
	}); err != nil {
		return err
	}
	go inf.RunWithContext(ctx)
	go p.loop(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch Secret %s/%s: %w", p.namespace, p.name, ctx.Err())
	}
	if len(inf.GetStore().List()) == 0 {
		return fmt.Errorf("secret %s/%s not found; the volume cannot be mounted", p.namespace, p.name)
	}
	for {
		rv, changed, err := p.state()
		if err != nil {
			return err
		}
		if rv != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// loop writes updates in order, each once it is due.
func (p *Projector) loop(ctx context.Context) {
	for {
		var u update
		select {
		case <-ctx.Done():
			return
		case u = <-p.queue:
		}
		if wait := time.Until(u.due); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		var err error
		for _, dir := range p.dirs {
			if err = certtest.WriteAtomic(dir, u.data); err != nil {
				err = fmt.Errorf("project Secret %s/%s into %s: %w", p.namespace, p.name, dir, err)
				break
			}
		}
		p.mu.Lock()
		if err == nil {
			p.written = u.resourceVersion
		}
		p.err = err
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}
}

func (p *Projector) state() (string, <-chan struct{}, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written, p.changed, p.err
}
