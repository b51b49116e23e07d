package syncer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// releaseRun runs the reconciler of withRelease on a harness, with a
// release whose reads it counts and can fail, and a log it observes.
type releaseRun struct {
	h     *harness
	ctx   context.Context
	sync  reconcile.Reconciler
	rel   releaser
	logs  *observer.ObservedLogs
	reads atomic.Int32
	fail  atomic.Bool
}

func newReleaseRun(t *testing.T) *releaseRun {
	t.Helper()
	ctx := context.Background()
	h, _ := installedByKimSnatch(ctx, t, []string{retiredManager})
	run := &releaseRun{h: h}
	run.sync, _ = directReconciler(t, h)
	c, err := client.NewWithWatch(h.cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reader := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			run.reads.Add(1)
			if run.fail.Load() {
				return errors.New("the API server is away")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	run.rel = releaser{reader: reader, client: c, name: h.cfg.WebhookConfiguration, metrics: m}
	var core zapcore.Core
	core, run.logs = observer.New(zapcore.InfoLevel)
	run.ctx = logf.IntoContext(ctx, zapr.NewLogger(zap.New(core)))
	return run
}

// reconcile runs one reconcile with managers, which must not fail, and
// returns its result and how often the release read.
func (run *releaseRun) reconcile(t *testing.T, managers []string) (reconcile.Result, int32) {
	t.Helper()
	run.logs.TakeAll()
	reads := run.reads.Load()
	res, err := withRelease(run.sync, run.rel, managers).Reconcile(run.ctx, reconcile.Request{})
	if err != nil {
		t.Fatalf("Reconcile = %v, want no error", err)
	}
	return res, run.reads.Load() - reads
}

// The release after a sync reads once per reconcile, logs each release once
// with its manager, and never fails or holds back the sync: a failed
// release is retried after the backoff, not returned as an error.
func TestReleaseAfterSyncReadsOnceAndNeverFailsTheSync(t *testing.T) {
	run := newReleaseRun(t)
	managers := run.h.cfg.ReleaseFieldManagers
	t.Run("failed_release_keeps_the_sync_and_retries", func(t *testing.T) {
		run.fail.Store(true)
		defer run.fail.Store(false)
		res, _ := run.reconcile(t, managers)
		mwc := run.h.mwc(run.ctx)
		if mwc.Annotations[StateAnnotation] == "" {
			t.Error("the sync did not write the overlap state")
		}
		if !syncertest.HasApplyEntry(mwc, retiredManager) {
			t.Error("the entry is gone, though the release could not read")
		}
		if res.RequeueAfter <= 0 || res.RequeueAfter > 30*time.Second {
			t.Errorf("RequeueAfter = %s, want the backoff's retry, at most its 30s", res.RequeueAfter)
		}
		lines := run.logs.FilterMessage(msgReleaseRetiredFailed).All()
		if len(lines) != 1 || lines[0].Level != zapcore.ErrorLevel {
			t.Errorf("got %v, want one error line", lines)
		}
	})
	t.Run("retired_entry_is_released_with_one_read", func(t *testing.T) {
		if _, reads := run.reconcile(t, managers); reads != 1 {
			t.Errorf("the release read %d times, want 1", reads)
		}
		if syncertest.HasApplyEntry(run.h.mwc(run.ctx), retiredManager) {
			t.Errorf("the Apply entry of %s is still there", retiredManager)
		}
		lines := run.logs.FilterMessage(msgReleasedRetired).All()
		if len(lines) != 1 || lines[0].ContextMap()[logkeys.FieldManager] != retiredManager {
			t.Errorf("got %v, want one line with %s %s", lines, logkeys.FieldManager, retiredManager)
		}
		if got := testutil.ToFloat64(run.rel.metrics.ApplyEntriesReleased); got != 1 {
			t.Errorf("cabundle_syncer_apply_entries_released_total = %v, want 1", got)
		}
	})
	t.Run("nothing_left_to_release_writes_nothing", func(t *testing.T) {
		rv := run.h.mwc(run.ctx).ResourceVersion
		if _, reads := run.reconcile(t, managers); reads != 1 {
			t.Errorf("the release read %d times, want 1", reads)
		}
		if after := run.h.mwc(run.ctx).ResourceVersion; after != rv {
			t.Errorf("nothing to sync or release, but the object was written: resourceVersion %s -> %s", rv, after)
		}
		if lines := run.logs.FilterMessage(msgReleasedRetired).All(); len(lines) != 0 {
			t.Errorf("got %v, want no release line", lines)
		}
	})
	t.Run("no_managers_no_read", func(t *testing.T) {
		if _, reads := run.reconcile(t, nil); reads != 0 {
			t.Errorf("with no managers the release read %d times, want 0", reads)
		}
	})
}
