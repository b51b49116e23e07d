// Package cmdline holds what both binaries share, so they cannot drift apart:
// the root command with its subcommands (Root), the exit status (ExitCode), and
// the logger (NewLogger): one time format, and no decision lost to sampling.
package cmdline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/kyma-project/kim-snatch/pkg/version"
)

// Subcommand is a verb of a binary beside its root command, such as
// `snatch-webhook mutate`. It parses its own arguments.
type Subcommand struct {
	Name, Summary string
	Run           func(ctx context.Context, args []string) error
}

// Options are a root command's options O, through a pointer: BindFlags
// binds the flags, with the values O holds as their defaults, and Validate
// reports every invalid flag at once, by its flag name.
type Options[O any] interface {
	*O
	BindFlags(*flag.FlagSet)
	Validate() error
}

// Root is what both binaries share: the root command runs with options O
// that its flags fill, a flag "version" prints the version instead, and a
// first argument that is not a flag names a Subcommand.
type Root[O any, P Options[O]] struct {
	name, about string // about says what the root command does, for the usage text
	defaults    func() O
	run         func(context.Context, O) error
	subcommands []Subcommand
}

// NewRoot returns the root command of the binary name.
func NewRoot[O any, P Options[O]](name, about string, defaults func() O, run func(context.Context, O) error, subcommands ...Subcommand) Root[O, P] {
	return Root[O, P]{name: name, about: about, defaults: defaults, run: run, subcommands: subcommands}
}

// Execute runs the command that args (os.Args[1:]) name.
func (r Root[O, P]) Execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := r.defaults()
	fs := r.flagSet(P(&o), stderr)
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if i := slices.IndexFunc(r.subcommands, func(sc Subcommand) bool { return sc.Name == args[0] }); i >= 0 {
			return r.subcommands[i].Run(ctx, args[1:])
		}
		fs.Usage()
		return UsageError{Err: fmt.Errorf("unknown command %q", args[0])}
	}
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if v := fs.Lookup("version"); v != nil && v.Value.String() == "true" {
		_, err := fmt.Fprintln(stdout, version.String(r.name))
		return err
	}
	if err := P(&o).Validate(); err != nil {
		return UsageError{Err: err}
	}
	return r.run(ctx, o)
}

func (r Root[O, P]) flagSet(o P, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(r.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.BindFlags(fs)
	// controller-runtime's help of --zap-time-encoding says epoch and "nano".
	if f := fs.Lookup("zap-time-encoding"); f != nil {
		f.Usage = "Time format of the log: one of 'epoch', 'millis', 'nanos', 'iso8601', 'rfc3339' or 'rfc3339nano'. " +
			"Defaults to RFC 3339 in UTC with milliseconds."
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n", r.name)
		if len(r.subcommands) == 0 {
			fmt.Fprintf(stderr, "\n%s\n", r.about)
		} else {
			fmt.Fprintf(stderr, "       %s <command> [flags]\n\n%s\n\nCommands:\n", r.name, r.about)
		}
		for _, sc := range r.subcommands {
			fmt.Fprintf(stderr, "  %-10s %s\n", sc.Name, sc.Summary)
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// ParseFlags parses args with fs and refuses positional arguments, which no
// root command takes. Errors are UsageErrors, except flag.ErrHelp.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return UsageError{err}
	}
	if fs.NArg() > 0 {
		return UsageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}
	return nil
}

// ValidateBindAddress checks a listener flag's value: host:port, :port, or
// "0", which turns the listener off.
func ValidateBindAddress(flagName, addr string) error {
	if addr == "0" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port, :port or 0: %w", flagName, addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%s %q: port %q is not a number from 0 to 65535", flagName, addr, port)
	}
	return nil
}

// ExitUsage is the exit status of a UsageError: EX_USAGE of BSD's
// sysexits.h. It is not 2, Go's flag package's choice, because a command's
// own codes may give 2 a meaning, as `cabundle-syncer check` gives it FAIL:
// a mistyped command must not read as a verdict.
const ExitUsage = 64

// UsageError marks a mistake on the command line: an unknown flag, a bad
// value, an unknown subcommand, or Options that do not validate. It exits
// with ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// ExitError ends the process with Code, for a command whose outcome is a
// status, such as a check's WARN or FAIL; a nil Err exits quietly. It outranks
// a UsageError it wraps, so that a subcommand gives its mistakes its own code.
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

// ExitCode maps the outcome of a command to the exit status, and reports any
// error on stderr after the binary's name: 0 for success and -h, the code of
// an ExitError, ExitUsage for a UsageError and 1 for anything else.
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
		code = ExitUsage
	}
	fmt.Fprintf(stderr, "%s: %v\n", binary, err)
	return code
}

// Main runs execute with a context that ends at the first SIGINT or SIGTERM,
// and exits with ExitCode. After the first signal the default handling is
// back, so a second one ends the process at once instead of after the drain.
func Main(binary string, execute func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	err := execute(ctx)
	stop()
	os.Exit(ExitCode(binary, err, os.Stderr))
}
