// Package docs holds the tests that keep docs/ true to the code.
//
// Operators act on what docs/ says during an incident. The tests compare
// the documents with the built binaries' flags, the metrics the code
// registers, the alerts in deploy/, the log keys of pkg/logkeys and the
// health command's check ids, check the files they link to, and run the
// documented kubectl commands: read-only ones against a real API server
// holding deploy/, the others with --help or a server-side dry run.
// Documented applies name only released images (installs_test.go) and no
// release version (versions_test.go); each alert's runbook confirms it
// with the check Job's identity and fixes it (runbooks_test.go).
package docs
