#!/bin/sh
# Builds one of the shipped binaries exactly as its container image does.
# Dockerfile.webhook and Dockerfile.syncer call this script, and
# test/manifests runs it to check the result, so the flags live here only.
#
#   VERSION=v1.2.3 hack/build-binary.sh snatch-webhook bin
#
# REVISION is the commit the binary reports in --version and its build-info
# gauge: by default `git rev-parse HEAD` where a .git is there, else
# "unknown" (the image build context has no .git, so the Dockerfiles pass it
# as a build argument). GOOS and GOARCH are honoured as usual.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: VERSION=<version> $0 <snatch-webhook|cabundle-syncer> [output-dir]" >&2
	exit 2
fi
binary=$1
out=${2:-bin}
version=${VERSION:-dev}
if [ -z "${REVISION:-}" ] && [ -e .git ]; then
	REVISION=$(git rev-parse HEAD 2>/dev/null || true)
fi
revision=${REVISION:-unknown}

case $binary in
snatch-webhook | cabundle-syncer) ;;
*)
	echo "$0: unknown binary '$binary'; want snatch-webhook or cabundle-syncer" >&2
	exit 2
	;;
esac

# The version and revision each end up inside a single -ldflags word.
for value in "VERSION=$version" "REVISION=$revision"; do
	case ${value#*=} in
	'' | *[!A-Za-z0-9._+-]*)
		echo "$0: ${value%%=*} '${value#*=}' may only hold letters, digits and . _ + -" >&2
		exit 2
		;;
	esac
done

# The toolchain is go.mod's, whatever the environment says (the builder
# image sets GOTOOLCHAIN=local): the go command fetches it from the module
# proxy and checks it against the checksum database, so every build of a
# commit has one compiler and standard library (docs/releasing.md, "The
# toolchain").
toolchain=$(sed -n 's/^toolchain //p' go.mod)
if [ -z "$toolchain" ]; then
	echo "$0: go.mod names no toolchain; run from the repository root" >&2
	exit 2
fi
export GOTOOLCHAIN="$toolchain"

# CGO_ENABLED=0: a static binary for the distroless static base, which has no
#   libc.
# -trimpath: no build machine paths in the binary, so builds reproduce.
# -buildvcs=false: the image build context has no .git; leave it out
#   everywhere so a local build matches the image's.
# -s -w: no symbol table or DWARF; the image is for running, not debugging.
CGO_ENABLED=0 exec go build \
	-trimpath \
	-buildvcs=false \
	-ldflags "-s -w -X github.com/kyma-project/kim-snatch/pkg/version.version=${version} -X github.com/kyma-project/kim-snatch/pkg/version.revision=${revision}" \
	-o "${out}/${binary}" \
	"./cmd/${binary}"
