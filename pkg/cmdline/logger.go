package cmdline

import (
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// LogTimeLayout is the time format of both binaries' log lines, in UTC, unless
// --zap-time-encoding names another; docs/operations.md ("Logs") says why.
const LogTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// NewLogger returns the logger that o, the --zap-* flags, describe, as
// controller-runtime builds it, but with times in LogTimeLayout unless o names
// a time encoder, and with the loggers named unsampled, exactly, never sampled:
// in production controller-runtime keeps the first 100 lines a second of each
// message, then 1 in 100, which breaks the promise that a request is one line.
func NewLogger(o crzap.Options, unsampled ...string) logr.Logger {
	if o.TimeEncoder == nil {
		layout := zapcore.TimeEncoderOfLayout(LogTimeLayout)
		o.TimeEncoder = func(t time.Time, enc zapcore.PrimitiveArrayEncoder) { layout(t.UTC(), enc) }
	}
	// controller-runtime wraps the core in its sampler after applying
	// o.ZapOpts, so the last of them sees the core before sampling.
	var direct zapcore.Core
	o.ZapOpts = append(slices.Clip(o.ZapOpts), zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		direct = c
		return c
	}))
	log := crzap.NewRaw(crzap.UseFlagOptions(&o))
	if len(unsampled) > 0 {
		log = log.WithOptions(zap.WrapCore(func(sampled zapcore.Core) zapcore.Core {
			return &routeCore{Core: direct, sampled: sampled, unsampled: slices.Clone(unsampled)}
		}))
	}
	return zapr.NewLogger(log)
}

// routeCore is the core without the sampler, except that Check sends the
// entries of loggers not named unsampled to sampled, which is that core or
// wraps it. Write, for callers that skip Check, samples nothing anyway.
type routeCore struct {
	zapcore.Core
	sampled   zapcore.Core
	unsampled []string
}

// Level lets zap.Logger.Level and zapcore.LevelOf see the level.
func (c *routeCore) Level() zapcore.Level { return zapcore.LevelOf(c.Core) }

func (c *routeCore) With(fields []zapcore.Field) zapcore.Core {
	return &routeCore{Core: c.Core.With(fields), sampled: c.sampled.With(fields), unsampled: c.unsampled}
}

func (c *routeCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if slices.Contains(c.unsampled, ent.LoggerName) {
		return c.Core.Check(ent, ce)
	}
	return c.sampled.Check(ent, ce)
}
