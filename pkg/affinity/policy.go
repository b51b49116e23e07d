package affinity

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults and names of the snatch-webhook flags that set a Policy.
// Validate names the flags, and `cabundle-syncer check` reads --worker-pool
// from the webhook Pods' arguments.
const (
	DefaultPoolLabelKey = "worker.gardener.cloud/pool"
	DefaultWorkerPool   = "cpu-worker-0"
	DefaultWeight       = 10

	FlagPoolLabelKey = "pool-label-key"
	FlagWorkerPool   = "worker-pool"
	FlagWeight       = "affinity-weight"
)

// The opt-out label with its only value that opts out, and the annotation
// of a mirror Pod: the API server's copy of a kubelet static Pod, bound to
// its node already and unchangeable.
const (
	OptOutLabel         = "kim-snatch.kyma-project.io/opt-out"
	OptOutValue         = "true"
	MirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// Policy says which term to add: a preferred term with Weight for nodes
// whose PoolLabelKey label equals WorkerPool.
type Policy struct {
	PoolLabelKey string
	WorkerPool   string
	Weight       int32
}

// DefaultPolicy returns the policy for Kyma's own worker pool on Gardener.
func DefaultPolicy() Policy {
	return Policy{PoolLabelKey: DefaultPoolLabelKey, WorkerPool: DefaultWorkerPool, Weight: DefaultWeight}
}

// Validate reports every problem at once, by the flags that set it. The
// weight range is the API server's (1-100): a term outside it would make
// every Pod creation fail validation after the webhook admitted it.
func (p Policy) Validate() error {
	var errs []error
	if p.PoolLabelKey == "" {
		errs = append(errs, errors.New("--"+FlagPoolLabelKey+" must not be empty"))
	} else if msgs := validation.IsQualifiedName(p.PoolLabelKey); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--%s %q is not a valid label key: %s", FlagPoolLabelKey, p.PoolLabelKey, strings.Join(msgs, "; ")))
	}
	if p.WorkerPool == "" {
		errs = append(errs, errors.New("--"+FlagWorkerPool+" must not be empty"))
	} else if msgs := validation.IsValidLabelValue(p.WorkerPool); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--%s %q is not a valid label value: %s", FlagWorkerPool, p.WorkerPool, strings.Join(msgs, "; ")))
	}
	if p.Weight < 1 || p.Weight > 100 {
		errs = append(errs, fmt.Errorf("--%s must be between 1 and 100 (the API server's range), got %d", FlagWeight, p.Weight))
	}
	return errors.Join(errs...)
}
