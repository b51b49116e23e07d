// Package cmdline holds the command-line conventions both binaries share: a
// mistake on the command line exits with status 2 and a message, -h exits
// 0, and any other error exits 1. A command whose result is a status of its
// own (cabundle-syncer check) says which code to exit with through an
// ExitError. Each binary keeps its own flags, Options and subcommands; only
// these rules live here, so that they cannot drift apart.
package cmdline
