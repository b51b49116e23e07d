// Package docs holds the tests that keep docs/ true to the code.
//
// Operators act on what docs/ says: a flag that does not exist, a metric
// or alert that was renamed, a log key that is never written or a kubectl
// command that does not parse costs time during an incident. The tests
// compare the documents with the flags of the built binaries, the metrics
// the code registers, the alerts in deploy/, the log key constants of
// pkg/logkeys, the check ids of the health command's contract, the files
// the documents link to, and run the documented kubectl commands: the
// read-only ones against a real API server that holds the objects of
// deploy/, the others with --help or a server-side dry run. What each
// documented apply names is rendered, a release's files as
// `hack/release.sh --manifests` writes them, and every image it runs must
// be a released one (installs_test.go), and no command pins a release
// version (versions_test.go). Each alert's runbook gives a command that
// confirms it, which the check Job's read-only identity may run, and one
// that fixes it (runbooks_test.go).
package docs
