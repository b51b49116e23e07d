#!/usr/bin/env bash
# Runs the end-to-end suite of test/e2e on a real node beside the local
# control plane (test/realnode): the images of `make images` from deploy/
# through test/e2e/overlay, as hack/e2e-kind.sh runs them on kind.
#
#   hack/e2e-node.sh [--skip-if-unable] [go test flags]
#
# Where the node cannot run (hack/node-prerequisites.sh says why) it fails;
# with --skip-if-unable it skips instead, unless CI=true. On exit, however
# the suite ended, it removes what the node left on the host and fails if the
# host is not as the node found it.
set -euo pipefail
cd "$(dirname "$0")/.."

skip_if_unable=
if [ "${1:-}" = --skip-if-unable ]; then
	skip_if_unable=1
	shift
fi
if ! hack/node-prerequisites.sh; then
	if [ -n "$skip_if_unable" ] && [ "${CI:-}" != true ]; then
		echo "e2e-node: skipped: the real node cannot run here (see above)" >&2
		exit 0
	fi
	exit 1
fi

clean() {
	local code=$?
	go run ./test/realnode/cmd/node-clean || code=1
	exit "$code"
}
trap clean EXIT
SNATCH_E2E_RUNTIME=node go test -count=1 "$@" ./test/e2e
