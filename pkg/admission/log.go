package admission

import (
	"bytes"
	"strings"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// MsgDecision is the message of the one line logged for every request:
// decided, failed, panicked or malformed. The keys logkeys.Outcome and
// logkeys.Reason carry the same values as the labels of
// snatch_webhook_admission_total; logkeys.Namespace, logkeys.Pod and
// logkeys.UID name the request.
//
// Decisions are logged at info level, the zap default that the manifests
// keep, so that every Pod's decision can be found in the webhook's log.
// Errors, a panic among them, are logged at error level.
const MsgDecision = "Admission decision"

// decisionLogger writes the decision lines.
//
// The line is logged for every Pod created in a Kyma namespace, so its cost
// counts. Through logr, each key and value is boxed into an interface and
// zapr turns the list into zap fields again: ten allocations a line. When
// the logger is zapr's, as it is in the binary, the hot path writes to its
// zap.Logger directly, with one inline field whose strings share one
// allocation: two allocations a line (see BenchmarkHandler, fast_zap_json).
// The strings are copies, not views into the pooled request body, so a zap
// core that keeps fields after Write (zaptest/observer does) still sees the
// right values. Other logr sinks get the same keys through logr.
type decisionLogger struct {
	log logr.Logger
	// zap is log's zap.Logger, or nil when log's sink is not zapr.
	zap *zap.Logger
}

func newDecisionLogger(l logr.Logger) decisionLogger {
	dl := decisionLogger{log: l}
	if u, ok := l.GetSink().(zapr.Underlier); ok {
		// zapr skips one caller frame for logr's own; this call has none.
		dl.zap = u.GetUnderlying().WithOptions(zap.AddCallerSkip(-1))
	}
	return dl
}

// decision logs the decision on a well-formed review.
func (l decisionLogger) decision(rev *review, d affinity.Decision, err error) {
	outcome := OutcomeAllowed
	if d.Patched() {
		outcome = OutcomePatched
	}
	if err == nil && l.zap != nil {
		if ce := l.zap.Check(zapcore.InfoLevel, MsgDecision); ce != nil {
			e := newDecisionEntry(rev, outcome, string(d.Reason), d.Message)
			ce.Write(e.fields[:]...)
		}
		return
	}
	if !l.log.Enabled() && err == nil {
		return
	}
	kv := []any{
		logkeys.Namespace, rev.namespace.String(),
		logkeys.Pod, podName(rev),
		logkeys.UID, uidString(rev.uid),
		logkeys.Outcome, outcome,
		logkeys.Reason, string(d.Reason),
		logkeys.Detail, d.Message,
	}
	if rev.dryRun {
		kv = append(kv, logkeys.DryRun, true)
	}
	if err != nil {
		l.log.Error(err, MsgDecision, kv...)
		return
	}
	l.log.Info(MsgDecision, kv...)
}

// malformed logs a request answered with a 4xx. rev holds what was read
// before the request turned out malformed, often nothing.
func (l decisionLogger) malformed(rev *review, e *requestError) {
	l.log.Info(MsgDecision,
		logkeys.Namespace, rev.namespace.String(),
		logkeys.Pod, podName(rev),
		logkeys.UID, uidString(rev.uid),
		logkeys.Outcome, OutcomeMalformed,
		logkeys.Reason, e.reason,
		logkeys.Detail, e.message,
		logkeys.Status, e.code)
}

// panicked logs a panic that was answered with "allowed, no patch".
func (l decisionLogger) panicked(rev *review, err error) {
	l.log.Error(err, MsgDecision,
		logkeys.Namespace, rev.namespace.String(),
		logkeys.Pod, podName(rev),
		logkeys.UID, uidString(rev.uid),
		logkeys.Outcome, OutcomeAllowed,
		logkeys.Reason, string(affinity.ReasonError),
		logkeys.Detail, "the handler panicked")
}

// decisionEntry is one decision line's fields, in one allocation with the
// zap field that points at it.
type decisionEntry struct {
	namespace, pod, uid     string
	outcome, reason, detail string
	dryRun                  bool
	fields                  [1]zap.Field
}

var _ zapcore.ObjectMarshaler = (*decisionEntry)(nil)

func newDecisionEntry(rev *review, outcome, reason, detail string) *decisionEntry {
	e := &decisionEntry{outcome: outcome, reason: reason, detail: detail, dryRun: rev.dryRun}
	// One string holds the namespace, the Pod name and the uid.
	var b strings.Builder
	b.Grow(len(rev.namespace.raw) + len(rev.name.raw) + len(rev.pod.name.raw) + len(rev.pod.generateName.raw) + 1 + len(rev.uid))
	writeStr(&b, rev.namespace)
	nsEnd := b.Len()
	switch {
	case len(rev.name.raw) > 0:
		writeStr(&b, rev.name)
	case len(rev.pod.name.raw) > 0:
		writeStr(&b, rev.pod.name)
	case len(rev.pod.generateName.raw) > 0:
		writeStr(&b, rev.pod.generateName)
		b.WriteByte('*')
	}
	podEnd := b.Len()
	if len(rev.uid) >= 2 {
		raw := rev.uid[1 : len(rev.uid)-1]
		writeStr(&b, str{raw: raw, escaped: bytes.IndexByte(raw, '\\') >= 0})
	}
	s := b.String()
	e.namespace, e.pod, e.uid = s[:nsEnd], s[nsEnd:podEnd], s[podEnd:]
	e.fields[0] = zap.Inline(e)
	return e
}

func writeStr(b *strings.Builder, s str) {
	if s.escaped {
		b.WriteString(s.String())
		return
	}
	b.Write(s.raw)
}

// MarshalLogObject writes the keys in the order of the logr path.
func (e *decisionEntry) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString(logkeys.Namespace, e.namespace)
	enc.AddString(logkeys.Pod, e.pod)
	enc.AddString(logkeys.UID, e.uid)
	enc.AddString(logkeys.Outcome, e.outcome)
	enc.AddString(logkeys.Reason, e.reason)
	enc.AddString(logkeys.Detail, e.detail)
	if e.dryRun {
		enc.AddBool(logkeys.DryRun, true)
	}
	return nil
}

// podName names the Pod for the log: its name, or its generateName
// followed by "*" when the name is still to be generated.
func podName(rev *review) string {
	if len(rev.name.raw) > 0 {
		return rev.name.String()
	}
	if len(rev.pod.name.raw) > 0 {
		return rev.pod.name.String()
	}
	if len(rev.pod.generateName.raw) > 0 {
		return rev.pod.generateName.String() + "*"
	}
	return ""
}

func uidString(tok []byte) string {
	if len(tok) < 2 {
		return ""
	}
	raw := tok[1 : len(tok)-1]
	return str{raw: raw, escaped: bytes.IndexByte(raw, '\\') >= 0}.String()
}
