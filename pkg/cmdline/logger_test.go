package cmdline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// fixedClock stops zap's clock, so that every line falls in the same
// second of the sampler, however slow the machine.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

var testTime = time.Date(2026, 1, 1, 0, 0, 0, 100_000_000, time.UTC)

// testLogger is NewLogger with the --zap-* flags args, writing to the
// returned buffer at testTime.
func testLogger(t *testing.T, args []string, unsampled ...string) (logr.Logger, *bytes.Buffer) {
	t.Helper()
	var o crzap.Options
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o.DestWriter = &out
	o.ZapOpts = []zap.Option{zap.WithClock(fixedClock{testTime})}
	return NewLogger(o, unsampled...), &out
}

// sampledCount is how many of n lines of one message in one second
// controller-runtime's production sampler keeps: the first 100, then every
// 100th.
func sampledCount(n int) int { return 100 + (n-100)/100 }

func countLines(out *bytes.Buffer, msg string) int {
	return strings.Count(out.String(), `"msg":"`+msg+`"`)
}

func TestNewLoggerSamplesAllButTheUnsampledLoggers(t *testing.T) {
	const burst = 1000
	tests := []struct {
		name string
		log  func(logr.Logger) logr.Logger
		want int
	}{
		{name: "unsampled_logger_keeps_every_info_line", log: func(l logr.Logger) logr.Logger { return l.WithName("decisions") }, want: burst},
		{name: "unsampled_logger_with_values_keeps_every_line", log: func(l logr.Logger) logr.Logger { return l.WithName("decisions").WithValues("k", "v") }, want: burst},
		{name: "root_logger_is_sampled", log: func(l logr.Logger) logr.Logger { return l }, want: sampledCount(burst)},
		{name: "other_logger_is_sampled", log: func(l logr.Logger) logr.Logger { return l.WithName("serving") }, want: sampledCount(burst)},
		{name: "child_of_unsampled_logger_is_sampled", log: func(l logr.Logger) logr.Logger { return l.WithName("decisions").WithName("child") }, want: sampledCount(burst)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, out := testLogger(t, nil, "decisions")
			l := tt.log(log)
			for range burst {
				l.Info("Repeated")
			}
			if got := countLines(out, "Repeated"); got != tt.want {
				t.Errorf("%d lines of %d, want %d", got, burst, tt.want)
			}
		})
	}
	t.Run("errors_of_the_unsampled_logger_are_all_kept", func(t *testing.T) {
		log, out := testLogger(t, nil, "decisions")
		for range burst {
			log.WithName("decisions").Error(errors.New("boom"), "Repeated")
		}
		if got := countLines(out, "Repeated"); got != burst {
			t.Errorf("%d lines of %d, want all", got, burst)
		}
	})
	t.Run("unsampled_lines_do_not_count_toward_the_sample", func(t *testing.T) {
		log, out := testLogger(t, nil, "decisions")
		for range burst {
			log.WithName("decisions").Info("Repeated")
			log.Info("Repeated")
		}
		if got, want := countLines(out, "Repeated"), burst+sampledCount(burst); got != want {
			t.Errorf("%d lines, want %d: all of the unsampled logger and a sample of the others", got, want)
		}
	})
}

func TestNewLoggerKeepsTheZapFlags(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantJSON  bool
		wantDebug bool
		wantTS    any // the "ts" of a JSON line
		wantText  string
	}{
		{name: "defaults_give_json_at_info_in_milliseconds", wantJSON: true, wantTS: "2026-01-01T00:00:00.100Z"},
		{name: "debug_level_logs_debug_lines", args: []string{"--zap-log-level=debug"}, wantJSON: true, wantDebug: true, wantTS: "2026-01-01T00:00:00.100Z"},
		{name: "error_level_drops_debug_and_keeps_errors", args: []string{"--zap-log-level=error"}, wantJSON: true},
		{name: "time_encoding_epoch_gives_seconds", args: []string{"--zap-time-encoding=epoch"}, wantJSON: true, wantTS: float64(testTime.UnixNano()) / 1e9},
		{name: "time_encoding_rfc3339_drops_the_milliseconds", args: []string{"--zap-time-encoding=rfc3339"}, wantJSON: true, wantTS: "2026-01-01T00:00:00Z"},
		{name: "console_encoder_writes_text", args: []string{"--zap-encoder=console"}, wantText: "2026-01-01T00:00:00.100Z\tINFO\tdecisions\tinfo line"},
		{name: "devel_writes_debug_text", args: []string{"--zap-devel"}, wantDebug: true, wantText: "2026-01-01T00:00:00.100Z\tINFO\tdecisions\tinfo line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, out := testLogger(t, tt.args, "decisions")
			log = log.WithName("decisions")
			log.V(1).Info("debug line")
			log.Info("info line")
			log.Error(errors.New("boom"), "error line")
			text := out.String()
			if got := strings.Contains(text, "debug line"); got != tt.wantDebug {
				t.Errorf("debug line logged = %v, want %v:\n%s", got, tt.wantDebug, text)
			}
			if !strings.Contains(text, "error line") {
				t.Errorf("no error line:\n%s", text)
			}
			if tt.wantText != "" && !strings.Contains(text, tt.wantText) {
				t.Errorf("output does not contain %q:\n%s", tt.wantText, text)
			}
			first, _, _ := strings.Cut(text, "\n")
			var line map[string]any
			if isJSON := json.Unmarshal([]byte(first), &line) == nil; isJSON != tt.wantJSON {
				t.Fatalf("JSON = %v, want %v: %s", isJSON, tt.wantJSON, first)
			}
			if tt.wantTS != nil && line["ts"] != tt.wantTS {
				t.Errorf("ts = %#v, want %#v", line["ts"], tt.wantTS)
			}
		})
	}
}

func TestLogTimeLayoutIsRFC3339(t *testing.T) {
	s := testTime.Format(LogTimeLayout)
	got, err := time.Parse(time.RFC3339, s)
	if err != nil || !got.Equal(testTime) {
		t.Errorf("time.Parse(RFC3339, %q) = %v, %v; want %v", s, got, err, testTime)
	}
}

type zapOptions struct{ Zap crzap.Options }

func (o *zapOptions) BindFlags(fs *flag.FlagSet) { o.Zap.BindFlags(fs) }
func (o zapOptions) Validate() error             { return nil }

func TestRootHelpNamesTheTimeEncodingDefault(t *testing.T) {
	run := func(context.Context, zapOptions) error { return nil }
	root := NewRoot[zapOptions]("tool", "Logs.", func() zapOptions { return zapOptions{} }, run)
	var stderr bytes.Buffer
	if err := root.Execute(context.Background(), []string{"-h"}, io.Discard, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Execute(-h) = %v, want flag.ErrHelp", err)
	}
	if want := "'nanos', 'iso8601', 'rfc3339' or 'rfc3339nano'. Defaults to RFC 3339 in UTC with milliseconds."; !strings.Contains(stderr.String(), want) {
		t.Errorf("help does not contain %q:\n%s", want, stderr.String())
	}
	if strings.Contains(stderr.String(), "Defaults to 'epoch'") {
		t.Errorf("help still names epoch as the default:\n%s", stderr.String())
	}
}
