package admission

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/logtest"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// jsonLogger is the binary's logger: zap's production JSON encoder behind
// zapr, at info level.
func jsonLogger() (logr.Logger, *logtest.Buffer) {
	buf := &logtest.Buffer{}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), buf, zapcore.InfoLevel)
	return zapr.NewLogger(zap.New(core)), buf
}

// loggedLine posts body to a handler that logs as the binary does, and
// returns the one line it logged, failing t on any other count.
func loggedLine(t *testing.T, body []byte) map[string]any {
	t.Helper()
	log, buf := jsonLogger()
	h, _ := newTestHandler(t, func(o *Options) { o.Log = log })
	post(h, "application/json", body)
	lines := buf.Objects(t)
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1: %v", len(lines), lines)
	}
	return lines[0]
}

// Every request is one line with the message and the stable keys, and the
// outcome and reason are those of the metric.
func TestHandlerLogsDecisionWithStableKeys(t *testing.T) {
	tests := []struct {
		name  string
		body  []byte
		level string
		want  map[string]any
	}{
		{
			name: "injected_is_info_with_generate_name", level: "info",
			body: reviewOf(t, "uid-a", "CREATE", podKind, goldenPod(t, "replicaset-generate-name.yaml")),
			want: map[string]any{
				logkeys.Outcome: OutcomePatched, logkeys.Reason: string(affinity.ReasonInjected),
				logkeys.Namespace: "kyma-system", logkeys.Pod: "eventing-manager-7d9c8b6f5-*", logkeys.UID: "uid-a",
			},
		},
		{
			name: "already_set_is_info", level: "info",
			body: reviewOf(t, "uid-b", "CREATE", podKind, goldenPod(t, "node-selector-pool.yaml")),
			want: map[string]any{
				logkeys.Outcome: OutcomeAllowed, logkeys.Reason: string(affinity.ReasonAlreadySet),
				logkeys.Namespace: "kyma-system", logkeys.UID: "uid-b",
			},
		},
		{
			name: "already_scheduled_is_info", level: "info",
			body: reviewOf(t, "uid-c", "CREATE", podKind, goldenPod(t, "bound.yaml")),
			want: map[string]any{logkeys.Outcome: OutcomeAllowed, logkeys.Reason: string(affinity.ReasonAlreadyScheduled), logkeys.UID: "uid-c"},
		},
		{
			name: "escaped_uid_is_logged_unescaped", level: "info",
			body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"a\"b\u00e9","kind":` + podKind + `,"operation":"DELETE","namespace":"n\u0073","name":"p"}}`),
			want: map[string]any{logkeys.Outcome: OutcomeAllowed, logkeys.Reason: string(affinity.ReasonNotCreate), logkeys.UID: `a"bé`, logkeys.Namespace: "ns", logkeys.Pod: "p"},
		},
		{
			name: "dry_run_is_marked", level: "info",
			body: bytes.Replace(reviewOf(t, "uid-d", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")), []byte(`"dryRun":false`), []byte(`"dryRun":true`), 1),
			want: map[string]any{logkeys.Outcome: OutcomePatched, logkeys.DryRun: true, logkeys.UID: "uid-d"},
		},
		{
			name: "internal_error_is_error_level", level: "error",
			body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"uid-e","kind":` + podKind + `,"operation":"CREATE","namespace":"kyma-system","object":{"spec":{"affinity":[]}}}}`),
			want: map[string]any{logkeys.Outcome: OutcomeAllowed, logkeys.Reason: string(affinity.ReasonError), logkeys.UID: "uid-e", logkeys.Namespace: "kyma-system"},
		},
		{
			name: "malformed_is_info_with_status", level: "info",
			body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`),
			want: map[string]any{logkeys.Outcome: OutcomeMalformed, logkeys.Reason: ReasonNoRequest, logkeys.Status: float64(400)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loggedLine(t, tt.body)
			if got["msg"] != MsgDecision || got["level"] != tt.level {
				t.Errorf("msg %q at level %q, want %q at %q", got["msg"], got["level"], MsgDecision, tt.level)
			}
			for _, k := range []string{logkeys.Outcome, logkeys.Reason, logkeys.Namespace, logkeys.Pod, logkeys.UID, logkeys.Detail} {
				if _, ok := got[k]; !ok {
					t.Errorf("line %v lacks key %q", got, k)
				}
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %#v, want %#v (line %v)", k, got[k], v, got)
				}
			}
		})
	}
}

// The zap fast path and the logr path write the same keys and values.
func TestHandlerLogPathsAgree(t *testing.T) {
	body := reviewOf(t, "uid-same", "CREATE", podKind, goldenPod(t, "replicaset-generate-name.yaml"))

	fast := loggedLine(t, body)
	for _, k := range []string{"level", "ts", "msg"} {
		delete(fast, k)
	}

	var slow map[string]any
	flog := funcr.NewJSON(func(obj string) {
		slow = map[string]any{}
		if err := json.Unmarshal([]byte(obj), &slow); err != nil {
			t.Fatal(err)
		}
	}, funcr.Options{})
	h, _ := newTestHandler(t, func(o *Options) { o.Log = flog })
	post(h, "application/json", body)
	for _, k := range []string{"logger", "level", "msg"} {
		delete(slow, k)
	}
	if !maps.Equal(fast, slow) {
		t.Fatalf("zap path logged %v\nlogr path logged %v", fast, slow)
	}
}

// A core that keeps the fields after Write, as zaptest/observer does, must
// still see each request's own values: the line must not point into the
// pooled request buffers.
func TestHandlerLoggedFieldsSurviveBufferReuse(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	h, _ := newTestHandler(t, func(o *Options) { o.Log = zapr.NewLogger(zap.New(core)) })
	uids := []string{"uid-first", "uid-second-is-longer", "uid-3"}
	for _, uid := range uids {
		post(h, "application/json", reviewOf(t, uid, "CREATE", podKind, goldenPod(t, "no-affinity.yaml")))
	}
	var got []string
	for _, e := range logs.FilterMessage(MsgDecision).All() {
		got = append(got, e.ContextMap()[logkeys.UID].(string))
	}
	if !slices.Equal(got, uids) {
		t.Fatalf("logged uids %v, want %v", got, uids)
	}
}

// Below info level nothing is written and the line is not built.
func TestHandlerLogsNothingWhenInfoIsOff(t *testing.T) {
	buf := &logtest.Buffer{}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), buf, zapcore.WarnLevel)
	h, _ := newTestHandler(t, func(o *Options) { o.Log = zapr.NewLogger(zap.New(core)) })
	post(h, "application/json", reviewOf(t, "uid-quiet", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")))
	if lines := buf.Objects(t); len(lines) != 0 {
		t.Fatalf("logged %v at warn level", lines)
	}
}
