package cmdline

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/kyma-project/kim-snatch/pkg/version"
)

// Subcommand is a verb of a binary beside its root command, such as
// `snatch-webhook mutate`. It parses its own arguments.
type Subcommand struct {
	Name, Summary string
	Run           func(ctx context.Context, args []string) error
}

// Root is what both binaries share: the root command runs with options O
// that its flags fill and Validate checks, --version prints the version,
// and a first argument that is not a flag names a Subcommand.
type Root[O any] struct {
	Name           string
	About          string // what the root command does, for the usage text
	Stdout, Stderr io.Writer
	// Defaults returns the options at the flags' defaults; Bind binds them.
	Defaults    func() O
	Bind        func(*O, *flag.FlagSet)
	Validate    func(O) error // reports every invalid flag at once, by its flag name
	Version     func(O) bool  // reports whether --version was given
	Run         func(context.Context, O) error
	Subcommands []Subcommand
}

// Execute runs the command that args (os.Args[1:]) name.
func (r Root[O]) Execute(ctx context.Context, args []string) error {
	o := r.Defaults()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, sc := range r.Subcommands {
			if sc.Name == args[0] {
				return sc.Run(ctx, args[1:])
			}
		}
		r.flagSet(&o).Usage()
		return UsageError{Err: fmt.Errorf("unknown command %q", args[0])}
	}
	if err := ParseFlags(r.flagSet(&o), args); err != nil {
		return err
	}
	if r.Version(o) {
		_, err := fmt.Fprintln(r.Stdout, version.String(r.Name))
		return err
	}
	if err := r.Validate(o); err != nil {
		return UsageError{Err: err}
	}
	return r.Run(ctx, o)
}

func (r Root[O]) flagSet(o *O) *flag.FlagSet {
	fs := flag.NewFlagSet(r.Name, flag.ContinueOnError)
	fs.SetOutput(r.Stderr)
	r.Bind(o, fs)
	fs.Usage = func() {
		fmt.Fprintf(r.Stderr, "Usage: %s [flags]\n", r.Name)
		if len(r.Subcommands) > 0 {
			fmt.Fprintf(r.Stderr, "       %s <command> [flags]\n", r.Name)
		}
		fmt.Fprintf(r.Stderr, "\n%s\n", r.About)
		if len(r.Subcommands) > 0 {
			fmt.Fprintf(r.Stderr, "\nCommands:\n")
			for _, sc := range r.Subcommands {
				fmt.Fprintf(r.Stderr, "  %-10s %s\n", sc.Name, sc.Summary)
			}
		}
		fmt.Fprintf(r.Stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
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
