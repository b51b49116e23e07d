package syncer

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// One write of the MutatingWebhookConfiguration that adds a CA with an
// overlap state superseded far in the future must not keep that CA trusted
// past the overlap: the syncer reads the time as now, by its own clock.
func TestForgedFutureSupersededAtEndsWithTheOverlap(t *testing.T) {
	ctx := context.Background()
	const overlap = time.Hour
	h := newHarness(t, overlap, "a.kim-snatch.kyma-project.io")
	current := certtest.MustCA(t, certtest.Options{CommonName: "current"})
	forged := certtest.MustCA(t, certtest.Options{CommonName: "forged"})
	h.putCA(ctx, current.CertPEM)

	// Whoever may patch the object writes the forged CA into the caBundle
	// with a state, in the annotation's documented format, that says it left
	// the Secret in 2099.
	mwc := h.mwc(ctx)
	mwc.Webhooks[0].ClientConfig.CABundle = append(append([]byte{}, current.CertPEM...), forged.CertPEM...)
	mwc.Annotations = map[string]string{StateAnnotation: fmt.Sprintf(
		`{"v":1,"cas":{%q:{"firstSeen":"2026-01-01T00:00:00Z"},%q:{"firstSeen":"2026-01-01T00:00:00Z","supersededAt":"2099-01-01T00:00:00Z"}}}`,
		current.Fingerprint(), forged.Fingerprint())}
	if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The clock of the syncer; whole seconds, as the state keeps them.
	start := time.Now().UTC().Truncate(time.Second)
	r, _ := directReconciler(t, h)
	r.now = func() time.Time { return start }
	requeue := reconcileOnce(ctx, t, r)
	after := h.mwc(ctx)
	if !syncertest.EveryBundleIs(after, current.Fingerprint(), forged.Fingerprint()) {
		t.Fatalf("within the overlap the bundle holds %v, want the current CA and the forged one", certtest.Fingerprints(after.Webhooks[0].ClientConfig.CABundle))
	}
	if got := h.state(after)[forged.Fingerprint()].SupersededAt; !got.Equal(start) {
		t.Errorf("the forged CA's overlap starts at %s, want the syncer's now, %s", got, start)
	}
	if requeue != overlap {
		t.Errorf("RequeueAfter = %s, want the overlap %s from now", requeue, overlap)
	}

	r.now = func() time.Time { return start.Add(overlap + time.Second) }
	reconcileOnce(ctx, t, r)
	if after := h.mwc(ctx); !syncertest.EveryBundleIs(after, current.Fingerprint()) {
		t.Errorf("after the overlap the bundle holds %v, want the current CA alone", certtest.Fingerprints(after.Webhooks[0].ClientConfig.CABundle))
	}
}
