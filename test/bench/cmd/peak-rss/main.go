// Command peak-rss runs a command and writes its peak resident set and
// times, as getrusage counts them for that child, to a file:
//
//	peak-rss -o run.json -- cabundle-syncer check ...
//
// The harness cannot read them from its own children. Go starts a child
// with vfork, sharing the parent's memory until exec, and Linux carries the
// parent's high-water mark into the child's ru_maxrss at exec, so every
// child of the harness would report at least the harness's own peak. This
// command is small, so the floor it leaves in its child's figure, its own
// resident set (a few MiB), is far below what the commands measured use.
// GNU time's %M measures the same way; this keeps the harness free of
// anything not built from this repository.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/kyma-project/kim-snatch/test/bench/internal/command"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "peak-rss:", err)
		os.Exit(125)
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	fs := flag.NewFlagSet("peak-rss", flag.ContinueOnError)
	out := fs.String("o", "", "File the usage is written to, as JSON.")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if *out == "" || fs.NArg() == 0 {
		return 0, errors.New("usage: peak-rss -o FILE -- COMMAND [ARG...]")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	err := cmd.Run()
	u := command.Usage{Seconds: time.Since(start).Seconds()}
	if cmd.ProcessState == nil {
		return 0, err
	}
	u.ExitCode = cmd.ProcessState.ExitCode()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, errors.New("no rusage on this platform")
	}
	u.MaxRSSKiB = ru.Maxrss // KiB on Linux
	u.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	b, err := json.Marshal(u)
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return 0, err
	}
	return u.ExitCode, nil
}
