package syncer

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// msgReleaseRetiredFailed is the message of a failed release after a sync.
const msgReleaseRetiredFailed = "Releasing the field ownership of a retired field manager failed; retrying"

// releasingReconciler syncs, then releases the Apply entries of the
// retired field managers. A retired writer may still run beside the syncer
// and apply again, which is a change of the watched object and so another
// reconcile. The release comes after the sync, so that it never delays a
// write of the caBundle, and its failure never fails the sync: it is
// logged and retried after the controller's backoff, or at the next event.
type releasingReconciler struct {
	sync     reconcile.Reconciler
	releaser releaser
	managers []string
	backoff  workqueue.TypedRateLimiter[reconcile.Request]
}

// withRelease returns sync, releasing the Apply entries of managers after
// each reconcile; with no managers it returns sync as it is, which reads
// nothing more.
func withRelease(sync reconcile.Reconciler, r releaser, managers []string) reconcile.Reconciler {
	if len(managers) == 0 {
		return sync
	}
	return &releasingReconciler{sync: sync, releaser: r, managers: managers, backoff: retryBackoff()}
}

func (r *releasingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.sync.Reconcile(ctx, req)
	log := logf.FromContext(ctx).WithValues(logkeys.WebhookConfiguration, r.releaser.name)
	if relErr := r.releaser.release(ctx, r.managers, log); relErr != nil {
		delay := r.backoff.When(req)
		log.Error(relErr, msgReleaseRetiredFailed, logkeys.RequeueAfter, delay.String())
		// A sync's error requeues with the controller's backoff already,
		// which retries both; controller-runtime ignores a result beside it.
		if err == nil && (res.RequeueAfter == 0 || delay < res.RequeueAfter) {
			res.RequeueAfter = delay
		}
		return res, err
	}
	r.backoff.Forget(req)
	return res, err
}
