package affinity

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kyma-project/kim-snatch/pkg/validate"
)

// Defaults and names of the snatch-webhook flags that set a Policy (BindFlags).
// Validate names the flags, and `cabundle-syncer check` reads --worker-pool
// from webhook Pods' args (WorkerPoolFromArgs).
const (
	DefaultPoolLabelKey = "worker.gardener.cloud/pool"
	DefaultWorkerPool   = "cpu-worker-0"
	DefaultWeight       = 10

	FlagPoolLabelKey = "pool-label-key"
	FlagWorkerPool   = "worker-pool"
	FlagWeight       = "affinity-weight"
)

// The opt-out label with its only value that opts out, and the annotation of a
// mirror Pod: the API server's copy of a kubelet static Pod, bound to its node
// already and unchangeable.
const (
	OptOutLabel         = "kim-snatch.kyma-project.io/opt-out"
	OptOutValue         = "true"
	MirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// Policy is the term to add: preferred, with Weight, for nodes whose
// PoolLabelKey label is WorkerPool.
type Policy struct {
	PoolLabelKey string
	WorkerPool   string
	Weight       int32
}

// DefaultPolicy returns the policy for Kyma's own worker pool on Gardener.
func DefaultPolicy() Policy {
	return Policy{PoolLabelKey: DefaultPoolLabelKey, WorkerPool: DefaultWorkerPool, Weight: DefaultWeight}
}

// Term returns the preferred term the policy adds.
func (p Policy) Term() corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: p.Weight, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: p.PoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{p.WorkerPool}},
		},
	}}
}

// Validate reports every problem at once, by the flags that set it. Out of
// the API server's weight range, every Pod creation would fail validation.
func (p Policy) Validate() error {
	var errs validate.Errors
	if p.PoolLabelKey == "" {
		errs.Addf("--%s must not be empty", FlagPoolLabelKey)
	} else {
		errs.FieldIs("--"+FlagPoolLabelKey, p.PoolLabelKey, "a valid label key", validation.IsQualifiedName)
	}
	if p.WorkerPool == "" {
		errs.Addf("--%s must not be empty", FlagWorkerPool)
	} else {
		errs.FieldIs("--"+FlagWorkerPool, p.WorkerPool, "a valid label value", validation.IsValidLabelValue)
	}
	if p.Weight < 1 || p.Weight > 100 {
		errs.Addf("--%s must be between 1 and 100 (the API server's range), got %d", FlagWeight, p.Weight)
	}
	return errs.Err()
}

// BindFlags binds p's flags, with p's values as defaults, for the webhook and
// "snatch-webhook mutate".
func (p *Policy) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.WorkerPool, FlagWorkerPool, p.WorkerPool, "Value of the pool label that the preferred term selects.")
	fs.StringVar(&p.PoolLabelKey, FlagPoolLabelKey, p.PoolLabelKey, "Node label key of the worker pool.")
	fs.Func(FlagWeight, fmt.Sprintf("Weight of the preferred term, 1-100. (default %d)", p.Weight), func(s string) error {
		w, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return fmt.Errorf("not an integer: %q", s)
		}
		p.Weight = int32(w)
		return nil
	})
}

// WorkerPoolFromArgs returns the --worker-pool that snatch-webhook takes from
// args, and whether args set it. It parses them with BindFlags as the binary
// does: -worker-pool or --worker-pool, with =value or the value next, the last
// one winning; every other flag is stepped over with its value, and parsing
// stops at "--".
func WorkerPoolFromArgs(args []string) (string, bool) {
	p := DefaultPolicy()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p.BindFlags(fs)
	for len(args) > 0 {
		err := fs.Parse(args)
		rest := fs.Args()
		switch {
		case len(rest) == len(args): // a bad flag syntax or a value of another flag
			rest = rest[1:]
		case err == nil && args[len(args)-len(rest)-1] == "--":
			rest = nil
		case err == nil && len(rest) > 0: // a value of another flag, which fs does not know
			rest = rest[1:]
		}
		args = rest
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == FlagWorkerPool })
	return p.WorkerPool, set
}
