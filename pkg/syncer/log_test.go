package syncer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// Every sync ends in exactly one line whose message and outcome say what
// happened, with the keys operators grep for.
func TestReconcileLogsEverySyncWithStableKeys(t *testing.T) {
	h := newHarness(t, time.Hour, "a.kim-snatch.kyma-project.io")
	r, _ := directReconciler(t, h)
	core, logs := observer.New(zapcore.InfoLevel)
	ctx := logf.IntoContext(context.Background(), zapr.NewLogger(zap.New(core)))
	caA, caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"}), certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})

	l := syncLog{h: h, ctx: ctx, logs: logs}

	t.Run("secret_missing_is_refused", func(t *testing.T) {
		expectLine(t, l.sync(t, r, false), MsgRefused, OutcomeRefused, map[string]any{logkeys.Reason: ReasonSecretNotFound})
	})
	h.putCA(ctx, caA.CertPEM)
	t.Run("first_ca_is_written", func(t *testing.T) {
		e := l.sync(t, r, false)
		expectLine(t, e, MsgWritten, OutcomeWritten, map[string]any{
			logkeys.Certificates: int64(1), logkeys.Fingerprints: []string{caA.Fingerprint()}, logkeys.Webhooks: int64(1),
		})
		if _, ok := e.ContextMap()[logkeys.RequeueAfter]; !ok || e.Level != zapcore.InfoLevel {
			t.Errorf("line %v at level %s, want %s at info level", e.ContextMap(), e.Level, logkeys.RequeueAfter)
		}
	})
	t.Run("nothing_new_is_unchanged", func(t *testing.T) {
		expectLine(t, l.sync(t, r, false), MsgUnchanged, OutcomeUnchanged, map[string]any{
			logkeys.Certificates: int64(1), logkeys.Fingerprints: []string{caA.Fingerprint()},
		})
	})
	t.Run("garbage_is_refused_with_its_reason", func(t *testing.T) {
		h.putCA(ctx, []byte("not a certificate"))
		expectLine(t, l.sync(t, r, false), MsgRefused, OutcomeRefused, map[string]any{logkeys.Reason: string(cabundle.ReasonUnparsable)})
	})
	t.Run("rotation_keeps_the_old_ca_after_the_new", func(t *testing.T) {
		h.putCA(ctx, caB.CertPEM)
		expectLine(t, l.sync(t, r, false), MsgWritten, OutcomeWritten, map[string]any{
			logkeys.Certificates: int64(2), logkeys.Fingerprints: []string{caB.Fingerprint(), caA.Fingerprint()},
		})
	})
	t.Run("read_error_is_an_error_line", func(t *testing.T) {
		fr := failingReconciler(t, h)
		e := l.sync(t, fr, true)
		expectLine(t, e, MsgFailed, OutcomeError, map[string]any{logkeys.Reason: ReasonReadFailed})
		if e.Level != zapcore.ErrorLevel {
			t.Errorf("%q at level %s, want error", e.Message, e.Level)
		}
	})
}

// syncLog reads the sync lines a reconcile logs to logs.
type syncLog struct {
	h    *harness
	ctx  context.Context
	logs *observer.ObservedLogs
}

// sync runs one reconcile and returns its one sync line, which names the
// Secret and the webhook configuration.
func (l syncLog) sync(t *testing.T, r *Reconciler, wantErr bool) observer.LoggedEntry {
	t.Helper()
	l.logs.TakeAll()
	_, err := r.Reconcile(l.ctx, reconcile.Request{})
	if (err != nil) != wantErr {
		t.Fatalf("Reconcile error = %v, want an error: %v", err, wantErr)
	}
	var lines []observer.LoggedEntry
	for _, e := range l.logs.TakeAll() {
		if slices.Contains([]string{MsgWritten, MsgStateRecorded, MsgUnchanged, MsgRefused, MsgFailed, MsgDisabled}, e.Message) {
			lines = append(lines, e)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("got %d sync lines, want 1: %v", len(lines), lines)
	}
	got, cfg := lines[0].ContextMap(), l.h.cfg
	if got[logkeys.Secret] != cfg.SecretNamespace+"/"+cfg.SecretName || got[logkeys.WebhookConfiguration] != cfg.WebhookConfiguration {
		t.Errorf("line %q names secret %v and webhookConfiguration %v, want %s/%s and %s", lines[0].Message,
			got[logkeys.Secret], got[logkeys.WebhookConfiguration], cfg.SecretNamespace, cfg.SecretName, cfg.WebhookConfiguration)
	}
	return lines[0]
}

// expectLine checks that e has message msg, outcome and the keys of want.
func expectLine(t *testing.T, e observer.LoggedEntry, msg, outcome string, want map[string]any) {
	t.Helper()
	got := e.ContextMap()
	if e.Message != msg || got[logkeys.Outcome] != outcome {
		t.Errorf("line %q with outcome %v, want %q with %q", e.Message, got[logkeys.Outcome], msg, outcome)
	}
	for k, v := range want {
		if gv, ok := got[k]; !ok || !equalValue(gv, v) {
			t.Errorf("%q: %s = %#v, want %#v", e.Message, k, gv, v)
		}
	}
}

// failingReconciler is a Reconciler for h whose every read fails.
func failingReconciler(t *testing.T, h *harness) *Reconciler {
	t.Helper()
	c, err := client.NewWithWatch(h.cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failing := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("the API server is away")
		},
	})
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return NewReconciler(failing, events.NewFakeRecorder(10), m, h.cfg)
}

// equalValue compares a logged value with a wanted one; ContextMap turns a
// []string into a []any.
func equalValue(got, want any) bool {
	if w, ok := want.([]string); ok {
		g, ok := got.([]any)
		return ok && slices.Equal(g, toAny(w))
	}
	return got == want
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
