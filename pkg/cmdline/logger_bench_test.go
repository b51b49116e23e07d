package cmdline

import (
	"io"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// benchLine stands for a decision line: one inline object of strings.
type benchLine struct{ a, b, c string }

func (l *benchLine) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("a", l.a)
	enc.AddString("b", l.b)
	enc.AddString("c", l.c)
	return nil
}

// BenchmarkLogger writes one line the way pkg/admission's decision logger
// does (zap's Check, then Write with an inline object in a slice it
// keeps), through controller-runtime's production logger, which drops most
// of the lines in a second; through it at --zap-log-level=2, which writes
// them all (no sampler); and through NewLogger's route for an unsampled
// logger, which must write them all at the cost of the second.
//
// Run with: go test ./pkg/cmdline -run '^$' -bench Logger -benchmem
func BenchmarkLogger(b *testing.B) {
	opts := crzap.Options{DestWriter: io.Discard}
	level2 := opts
	level2.Level = zapcore.Level(-2)
	for _, bb := range []struct {
		name string
		log  logr.Logger
	}{
		{"controller_runtime_sampled", crzap.New(crzap.UseFlagOptions(&opts))},
		{"controller_runtime_level_2", crzap.New(crzap.UseFlagOptions(&level2))},
		{"new_logger_unsampled", NewLogger(opts, "decisions")},
	} {
		b.Run(bb.name, func(b *testing.B) {
			zl := bb.log.WithName("decisions").GetSink().(zapr.Underlier).GetUnderlying()
			line := &benchLine{"kyma-system", "eventing-manager-7d9c8b6f5-*", "4f1c7e2a-0b5d-4c55-9d0e-1a2b3c4d5e6f"}
			fields := []zap.Field{zap.Inline(line)}
			b.ReportAllocs()
			for b.Loop() {
				if ce := zl.Check(zapcore.InfoLevel, "Admission decision"); ce != nil {
					ce.Write(fields...)
				}
			}
		})
	}
}
