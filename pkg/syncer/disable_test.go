package syncer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The reason and the author the documented disable writes into the marker.
const markerReason, markerBy = "webhook suspected of slowing Pod creation", "oncall@example.com"

// putMarker creates the emergency-disable marker beside the Secret, as the
// documented disable does.
func (h *harness) putMarker(ctx context.Context) {
	h.t.Helper()
	marker := syncertest.DisableMarker(h.cfg.SecretNamespace, EmergencyDisableName, markerReason, markerBy)
	if _, err := h.cluster.Clientset.CoreV1().ConfigMaps(h.cfg.SecretNamespace).Create(ctx, marker, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// deleteMarker deletes the marker, as the documented restore does last.
func (h *harness) deleteMarker(ctx context.Context) {
	h.t.Helper()
	if err := h.cluster.Clientset.CoreV1().ConfigMaps(h.cfg.SecretNamespace).Delete(ctx, EmergencyDisableName, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) deleteMWC(ctx context.Context) {
	h.t.Helper()
	if err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, h.cfg.WebhookConfiguration, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// mwcStaysAbsent fails unless the MutatingWebhookConfiguration stays
// deleted for a while and no sync counts it missing: the syncer creates
// nothing and complains of nothing under the disable.
func (h *harness) mwcStaysAbsent(ctx context.Context) {
	h.t.Helper()
	mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	// The wait never holds: it looks at a fixed pause until its timeout,
	// and any sighting of the MWC or of the error ends it at once.
	err := poll.Until(ctx, "the MWC to stay absent", func(context.Context) error {
		if _, err := mwcs.Get(ctx, h.cfg.WebhookConfiguration, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return poll.Stop(fmt.Errorf("under the disable, Get = %v, want NotFound", err))
		}
		if n := h.metric("cabundle_syncer_errors_total", ReasonWebhookConfigNotFound); n != 0 {
			return poll.Stop(fmt.Errorf("under the disable, cabundle_syncer_errors_total{reason=%q} = %v, want 0", ReasonWebhookConfigNotFound, n))
		}
		return errors.New("absent")
	}, poll.Timeout(time.Second), poll.Interval(50*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) {
		h.t.Fatal(err)
	}
}

// The documented disable and restore with a running syncer: under the
// disable it reports it, writes nothing and counts no error; it writes the
// caBundle as soon as the restore brings the MWC back.
func TestEmergencyDisableHoldsUntilTheRestore(t *testing.T) {
	ctx := context.Background()
	h, _, _ := startSynced(ctx, t, "a.kim-snatch.kyma-project.io")
	h.waitMetric(ctx, "cabundle_syncer_webhook_configuration_found", 1)
	h.waitMetric(ctx, "cabundle_syncer_emergency_disabled", 0)
	const updates = 1 // the CA's write
	h.waitMetric(ctx, "cabundle_syncer_updates_total", updates)

	// The disable: the marker, then the MWC deleted.
	h.putMarker(ctx)
	h.waitMetric(ctx, "cabundle_syncer_emergency_disabled", 1)
	h.deleteMWC(ctx)
	h.waitMetric(ctx, "cabundle_syncer_webhook_configuration_found", 0)
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 0)
	// A rotation under the disable is a sync like any other.
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	h.metrics.InSync.Set(1)
	h.putCA(ctx, caB.CertPEM)
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 0)
	h.mwcStaysAbsent(ctx)
	if got := h.metric("cabundle_syncer_updates_total"); got != updates {
		t.Errorf("cabundle_syncer_updates_total went from %v to %v under the disable", updates, got)
	}
	if got := h.metric("cabundle_syncer_emergency_disabled"); got != 1 {
		t.Errorf("cabundle_syncer_emergency_disabled = %v under the disable, want 1", got)
	}

	// The restore: the MWC again, without a caBundle, and the marker last.
	if _, err := syncertest.CreateWebhookConfiguration(ctx, h.cluster.Clientset, syncertest.WebhookConfiguration(h.cfg.WebhookConfiguration, "a.kim-snatch.kyma-project.io")); err != nil {
		t.Fatal(err)
	}
	h.waitMWC(ctx, "the CA on the restored object", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleHas(m, caB.Fingerprint())
	})
	h.waitMetric(ctx, "cabundle_syncer_webhook_configuration_found", 1)
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)
	h.deleteMarker(ctx)
	h.waitMetric(ctx, "cabundle_syncer_emergency_disabled", 0)
	h.running()
}

// The disable is logged once per version of the marker, with its reason
// and author, at info level, and at debug level on the syncs after; no
// Event and no error. Without the marker the missing MWC is refused again.
func TestEmergencyDisableIsLoggedOnceWithTheMarkersReason(t *testing.T) {
	h := newEmptyHarness(t, time.Hour)
	r, rec := directReconciler(t, h)
	core, logs := observer.New(zapcore.DebugLevel)
	ctx := logf.IntoContext(context.Background(), zapr.NewLogger(zap.New(core)))
	h.putCA(ctx, certtest.MustCA(t, certtest.Options{CommonName: "ca"}).CertPEM)
	h.putMarker(ctx)
	l := syncLog{h: h, ctx: ctx, logs: logs}
	want := map[string]any{
		logkeys.Marker:        h.cfg.SecretNamespace + "/" + EmergencyDisableName,
		logkeys.DisableReason: markerReason, logkeys.DisabledBy: markerBy,
	}

	first := l.sync(t, r, false)
	expectLine(t, first, MsgDisabled, OutcomeDisabled, want)
	again := l.sync(t, r, false)
	expectLine(t, again, MsgDisabled, OutcomeDisabled, want)
	if first.Level != zapcore.InfoLevel || again.Level != zapcore.DebugLevel {
		t.Errorf("the disable logged at %s, then at %s; want info once, then debug", first.Level, again.Level)
	}
	expectNoEvent(t, rec)
	if n := testutil.ToFloat64(r.metrics.Errors.WithLabelValues(ReasonWebhookConfigNotFound)); n != 0 {
		t.Errorf("cabundle_syncer_errors_total{reason=%q} = %v under the disable, want 0", ReasonWebhookConfigNotFound, n)
	}
	if n := testutil.ToFloat64(r.metrics.InSync); n != 0 {
		t.Errorf("cabundle_syncer_in_sync = %v without the MWC, want 0", n)
	}

	h.deleteMarker(ctx)
	expectLine(t, l.sync(t, r, false), MsgRefused, OutcomeRefused, map[string]any{logkeys.Reason: ReasonWebhookConfigNotFound})
	expectEvent(t, rec, corev1.EventTypeWarning, EventWebhookConfigNotFound)
	h.putMarker(ctx)
	if e := l.sync(t, r, false); e.Level != zapcore.InfoLevel {
		t.Errorf("a new disable logged at %s, want info", e.Level)
	}
}

// The gauges of the MWC and of the marker follow what the informer holds:
// 1 from its add, through its updates, and 0 after its delete, a delete
// the informer learned of only on a relist included.
func TestPresenceFollowsTheInformer(t *testing.T) {
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "presence"})
	h := presence(gauge)
	marker := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: EmergencyDisableName}}
	steps := []struct {
		name  string
		event func()
		want  float64
	}{
		{"add", func() { h.OnAdd(marker, true) }, 1},
		{"update", func() { h.OnUpdate(marker, marker) }, 1},
		{"delete", func() { h.OnDelete(marker) }, 0},
		{"add_again", func() { h.OnAdd(marker, false) }, 1},
		{"delete_seen_on_a_relist", func() { h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: marker.Name, Obj: marker}) }, 0},
	}
	for _, s := range steps {
		s.event()
		if got := testutil.ToFloat64(gauge); got != s.want {
			t.Errorf("after %s: %v, want %v", s.name, got, s.want)
		}
	}
}
