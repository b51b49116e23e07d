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

// leaderTimeout bounds the wait for a syncer replica to lead.
const leaderTimeout = time.Minute

// leaderFinder finds the syncer replica that leads, to read its metrics.
type leaderFinder interface {
	Leader(ctx context.Context) (replica, error)
}
