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

// Options are a root command's options O, through a pointer: BindFlags
// binds the flags, with the values O holds as their defaults, and Validate
// reports every invalid flag at once, by its flag name. A flag "version"
// prints the version instead.
type Options[O any] interface {
	*O
	BindFlags(*flag.FlagSet)
	Validate() error
}

// Root is what both binaries share: the root command runs with options O
// that its flags fill, --version prints the version, and a first argument
// that is not a flag names a Subcommand.
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
		for _, sc := range r.subcommands {
			if sc.Name == args[0] {
				return sc.Run(ctx, args[1:])
			}
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
	correctTimeEncodingUsage(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags]\n", r.name)
		if len(r.subcommands) > 0 {
			fmt.Fprintf(stderr, "       %s <command> [flags]\n", r.name)
		}
		fmt.Fprintf(stderr, "\n%s\n", r.about)
		if len(r.subcommands) > 0 {
			fmt.Fprintf(stderr, "\nCommands:\n")
			for _, sc := range r.subcommands {
				fmt.Fprintf(stderr, "  %-10s %s\n", sc.Name, sc.Summary)
			}
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
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
