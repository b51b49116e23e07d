package admission

import (
	"errors"
	"strings"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// MsgDecision is the message of the one line logged for every request, at info
// level, or at error level for an error or a panic; docs/operations.md ("Logs")
// lists its keys.
const MsgDecision = "Admission decision"

// LoggerName is the name of the handler's logger (Options.Log). It logs nothing
// but the decision lines, so the binary's logger exempts it from sampling
// (cmdline.NewLogger).
const LoggerName = "admission"

// decisionLogger writes the decision lines, one for every Pod created in a Kyma
// namespace. Through logr, each key and value is boxed and made a zap field
// again; with a zapr sink, info lines go to its zap.Logger directly as one
// inline field (BenchmarkHandler, fast_zap_json). The strings are copies, not
// views into the pooled body, as a zap core may keep fields.
type decisionLogger struct {
	log logr.Logger
	zap *zap.Logger // log's zap.Logger, or nil when log's sink is not zapr
}

func newDecisionLogger(l logr.Logger) decisionLogger {
	dl := decisionLogger{log: l}
	if u, ok := l.GetSink().(zapr.Underlier); ok {
		// zapr skips one caller frame for logr's own; this call has none.
		dl.zap = u.GetUnderlying().WithOptions(zap.AddCallerSkip(-1))
	}
	return dl
}

// write logs line, naming rev's Pod, at error level when err is set.
func (l decisionLogger) write(rev *review, err error, line decisionLine) {
	line.detail = capField(line.detail)
	if err != nil && len(err.Error()) > maxLoggedField {
		err = errors.New(capField(err.Error()))
	}
	if err == nil && l.zap != nil {
		if ce := l.zap.Check(zapcore.InfoLevel, MsgDecision); ce != nil {
			e := new(line) // the one allocation for the line and its field
			e.setNames(rev)
			e.field[0] = zap.Inline(e)
			ce.Write(e.field[:]...)
		}
		return
	}
	if err == nil && !l.log.Enabled() {
		return
	}
	line.setNames(rev)
	kv := kvEncoder{}
	_ = line.MarshalLogObject(&kv) // never fails
	if err != nil {
		l.log.Error(err, MsgDecision, kv.kv...)
		return
	}
	l.log.Info(MsgDecision, kv.kv...)
}

// decisionLine is one line's values and, for zap, the field that points at them.
type decisionLine struct {
	namespace, pod, uid     string
	outcome, reason, detail string
	dryRun                  bool
	status                  int   // of a 4xx answer
	suppressed              int64 // malformed lines left out before this one
	field                   [1]zap.Field
}

// setNames sets the namespace, the Pod's name (its generateName followed by "*"
// when the name is still to be generated) and the uid, all three in one string.
func (e *decisionLine) setNames(rev *review) {
	pod, suffix := rev.name, ""
	if len(pod.raw) == 0 {
		pod = rev.pod.name
	}
	if len(pod.raw) == 0 && len(rev.pod.generateName.raw) > 0 {
		pod, suffix = rev.pod.generateName, "*"
	}
	var b strings.Builder
	b.Grow(min(len(rev.namespace.raw), maxLoggedField) + min(len(pod.raw), maxLoggedField) + len(suffix) + min(len(rev.uid.raw), maxLoggedField))
	writeCapped(&b, rev.namespace)
	nsEnd := b.Len()
	writeCapped(&b, pod)
	b.WriteString(suffix)
	podEnd := b.Len()
	writeCapped(&b, rev.uid)
	s := b.String()
	e.namespace, e.pod, e.uid = s[:nsEnd], s[nsEnd:podEnd], s[podEnd:]
}

// MarshalLogObject adds the line's keys, for zap and, through kvEncoder, for
// logr.
func (e *decisionLine) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString(logkeys.Namespace, e.namespace)
	enc.AddString(logkeys.Pod, e.pod)
	enc.AddString(logkeys.UID, e.uid)
	enc.AddString(logkeys.Outcome, e.outcome)
	enc.AddString(logkeys.Reason, e.reason)
	enc.AddString(logkeys.Detail, e.detail)
	if e.dryRun {
		enc.AddBool(logkeys.DryRun, true)
	}
	if e.status != 0 {
		enc.AddInt(logkeys.Status, e.status)
	}
	if e.suppressed != 0 {
		enc.AddInt64(logkeys.Suppressed, e.suppressed)
	}
	return nil
}

// kvEncoder collects what MarshalLogObject adds as logr's keys and values.
type kvEncoder struct {
	zapcore.ObjectEncoder // nil: MarshalLogObject calls only the methods below
	kv                    []any
}

func (e *kvEncoder) AddString(k, v string)      { e.kv = append(e.kv, k, v) }
func (e *kvEncoder) AddBool(k string, v bool)   { e.kv = append(e.kv, k, v) }
func (e *kvEncoder) AddInt(k string, v int)     { e.kv = append(e.kv, k, v) }
func (e *kvEncoder) AddInt64(k string, v int64) { e.kv = append(e.kv, k, v) }
