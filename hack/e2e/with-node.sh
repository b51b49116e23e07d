#!/usr/bin/env bash
# Runs a command, such as `go test ./...`, with the host ready for the real
# node of the end-to-end suites (test/realnode), and leaves the host as it
# found it:
#
#   hack/e2e/with-node.sh [--require] <command> [args...]
#
# It installs the node's Debian packages where they are missing
# (hack/e2e/node-prerequisites.sh). Where the node cannot run, the node suites
# skip themselves with a message, and the command runs all the same; with
# --require, or with CI=true, it fails instead. On exit, however the command
# ended, it removes what a node left on the host and fails if the host is
# not as the node found it.
set -euo pipefail
cd "$(dirname "$0")/../.."

require=
if [ "${1:-}" = --require ]; then
	require=1
	shift
fi
if ! hack/e2e/node-prerequisites.sh; then
	if [ -n "$require" ] || [ "${CI:-}" = true ]; then
		exit 1
	fi
	echo "with-node: the real node cannot run here; its suites skip (see above)" >&2
	exec "$@"
fi

clean() {
	local code=$?
	go run ./test/realnode/cmd/node-clean || code=1
	exit "$code"
}
trap clean EXIT
"$@"
