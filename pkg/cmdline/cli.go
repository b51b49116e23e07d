package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// UsageError marks a mistake on the command line: an unknown flag, a bad
// value, or Options that do not validate. It exits with status 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ExitError ends the process with Code. A command whose outcome is a
// status rather than a success or failure, such as a health check that
// reports WARN or FAIL, returns one after it printed its result. A nil Err
// exits quietly; otherwise Err is reported like any other error. It takes
// precedence over a UsageError it wraps, so that a subcommand can give its
// own exit code to mistakes on its command line.
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
// root command takes. Errors are UsageErrors, except flag.ErrHelp, which
// ExitCode maps to 0.
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
	var ue UsageError
	var ee ExitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		if ee.Err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		}
		return ee.Code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %v\n", binary, err)
		return 1
	}
}
