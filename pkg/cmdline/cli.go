// Package cmdline holds the command-line conventions both binaries share,
// so that they cannot drift apart: a mistake on the command line exits with
// status 2 and a message, -h exits 0, and any other error exits 1. A command
// whose result is a status of its own (cabundle-syncer check) says which
// code to exit with through an ExitError. Both log through NewLogger, so
// that their lines share one time format, and no admission decision is
// lost to sampling.
package cmdline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// UsageError marks a mistake on the command line: an unknown flag, a bad
// value, or Options that do not validate. It exits with status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ExitError ends the process with Code, for a command whose outcome is a
// status, such as a health check's WARN or FAIL. A nil Err exits quietly;
// otherwise Err is reported like any other error. It takes precedence over
// a UsageError it wraps: a subcommand gives its own code to its mistakes.
type ExitError struct {
	Code int
	Err  error
}

func (e ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e ExitError) Unwrap() error { return e.Err }

// ParseFlags parses args with fs and refuses positional arguments, which no
// root command takes. Errors are UsageErrors, except flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}
	return nil
}

// ExitCode maps the outcome of a command to the process exit status and
// reports any error on stderr, prefixed with the binary's name: 0 for
// success and -h, the code of an ExitError, 2 for a UsageError and 1 for
// anything else.
func ExitCode(binary string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code := 1
	if ee, ok := errors.AsType[ExitError](err); ok {
		if ee.Err == nil {
			return ee.Code
		}
		code = ee.Code
	} else if _, ok := errors.AsType[UsageError](err); ok {
		code = 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", binary, err)
	return code
}

// Main runs execute with a context that ends at the first SIGINT or
// SIGTERM, and exits with ExitCode. After the first signal the default
// handling is back, so a second one ends the process at once instead of
// waiting for the drain.
func Main(binary string, execute func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	err := execute(ctx)
	stop()
	os.Exit(ExitCode(binary, err, os.Stderr))
}
