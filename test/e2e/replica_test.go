package e2e

import (
	"context"
	"net/http"
	"time"

	"github.com/kyma-project/kim-snatch/test/process"
)

// replica is one running process of a binary, as Prometheus scrapes it:
// a process of the local stack or a container on the real node.
type replica struct {
	// Name is its Pod's name, App its binary.
	Name, App string
	// metricsURL and client read its /metrics as its ServiceMonitor does.
	metricsURL string
	client     *http.Client
	// logTail returns the last n lines of its log.
	logTail func(n int) string
}

// Metric reads one sample of its metrics.
func (r replica) Metric(name, labels string) (float64, error) {
	return process.Metric(r.client, r.metricsURL, name, labels)
}

// scrape reads all of its metrics.
func (r replica) scrape(ctx context.Context) ([]byte, error) {
	return getWith(ctx, r.client, r.metricsURL)
}

// metricsSource is a system whose replicas Prometheus could scrape from
// here: the real node, whose Pod network the host reaches. In a kind cluster the Pods' addresses are not reachable from
// the test, so the alert conditions are evaluated only where they are, and
// the rule unit tests (test/manifests) cover all.
type metricsSource interface {
	MetricsTargets(ctx context.Context) ([]replica, error)
}

// leaderTimeout bounds the wait for a syncer replica to lead.
const leaderTimeout = time.Minute

// leaderFinder finds the syncer replica that leads, to read its metrics.
type leaderFinder interface {
	Leader(ctx context.Context) (replica, error)
}
