// Package cmdline holds the command-line conventions both binaries share: a
// mistake on the command line exits with status 2 and a message, -h exits
// 0, and any other error exits 1. Each binary keeps its own flags, Options
// and subcommands; only these rules live here, so that they cannot drift
// apart.
package cmdline
