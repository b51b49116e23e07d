#!/bin/sh
# Builds a binary of this repository: one of the shipped binaries exactly as
# its container image does, or any other command of the repository's own
# code with the same flags. It is the one build of the project's own
# binaries: Dockerfile.webhook and Dockerfile.syncer, the Makefile (make
# build, make images, make vuln, the tools of hack/tools, the test images),
# hack/release/release.sh and the tests (test/process) call it, so the flags live
# here only.
#
#   VERSION=v1.2.3 hack/build/build-binary.sh snatch-webhook bin
#   hack/build/build-binary.sh test/e2e/kimsnatch/cmd/kim-snatch bin/images/build
#   hack/build/build-binary.sh hack/tools/imagetool/probe bin/images/build
#
# The first argument is snatch-webhook or cabundle-syncer (./cmd/<name>),
# or the folder of a main package, from the repository root. A folder is
# built in the module that holds it, on that module's own go.mod (a module
# of hack/tools, for example), and the binary is named after the folder.
#
# REVISION is the commit the binary reports in --version and its build-info
# gauge: by default `git rev-parse HEAD` where a .git is there, else
# "unknown" (the image build context has no .git, so the Dockerfiles pass it
# as a build argument). GOOS and GOARCH are honoured as usual.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: VERSION=<version> $0 <snatch-webhook|cabundle-syncer|package-folder> [output-dir]" >&2
	exit 2
fi
target=$1
out=${2:-bin}
version=${VERSION:-dev}
if [ -z "${REVISION:-}" ] && [ -e .git ]; then
	REVISION=$(git rev-parse HEAD 2>/dev/null || true)
fi
revision=${REVISION:-unknown}

# The toolchain is go.mod's, whatever the environment says (the builder
# image sets GOTOOLCHAIN=local): the go command fetches it from the module
# proxy and checks it against the checksum database, so every build of a
# commit has one compiler and standard library (docs/releasing.md, "The
# toolchain").
toolchain=$(sed -n 's/^toolchain //p' go.mod 2>/dev/null || true)
if [ -z "$toolchain" ]; then
	echo "$0: go.mod names no toolchain; run from the repository root" >&2
	exit 2
fi
export GOTOOLCHAIN="$toolchain"

# module is the folder of the module to build in, pkg the package in it.
module=.
case $target in
snatch-webhook | cabundle-syncer)
	binary=$target
	pkg=./cmd/$target
	;;
*)
	dir=${target%/}
	dir=${dir#./}
	case $dir in
	'' | /* | .. | ../* | */../* | */..)
		echo "$0: '$target' is not a folder of the repository; want snatch-webhook, cabundle-syncer or a package folder from the repository root" >&2
		exit 2
		;;
	esac
	if [ ! -d "$dir" ]; then
		echo "$0: unknown binary '$target'; want snatch-webhook, cabundle-syncer or a package folder from the repository root" >&2
		exit 2
	fi
	binary=${dir##*/}
	# The nearest go.mod above the folder holds its module.
	module=$dir
	while [ "$module" != . ] && [ ! -f "$module/go.mod" ]; do
		case $module in
		*/*) module=${module%/*} ;;
		*) module=. ;;
		esac
	done
	if [ "$module" = . ]; then
		pkg=./$dir
	else
		pkg=.${dir#"$module"}
	fi
	;;
esac

# The version and revision each end up inside a single -ldflags word, and
# the binary's name in a path.
for value in "VERSION=$version" "REVISION=$revision" "binary=$binary"; do
	case ${value#*=} in
	'' | *[!A-Za-z0-9._+-]*)
		echo "$0: ${value%%=*} '${value#*=}' may only hold letters, digits and . _ + -" >&2
		exit 2
		;;
	esac
done

# A module of its own is built on its own go.mod, never a workspace's.
if [ "$module" != . ]; then
	export GOWORK=off
fi
case $out in
/*) ;;
*) out=$PWD/$out ;;
esac

# CGO_ENABLED=0: a static binary for the distroless static base, which has no
#   libc.
# -trimpath: no build machine paths in the binary, so builds reproduce.
# -buildvcs=false: the image build context has no .git; leave it out
#   everywhere so a local build matches the image's.
# -s -w: no symbol table or DWARF; the image is for running, not debugging.
# The -X stamps set pkg/version's variables; in a binary that does not link
# that package the linker ignores them.
CGO_ENABLED=0 exec go -C "$module" build \
	-trimpath \
	-buildvcs=false \
	-ldflags "-s -w -X github.com/kyma-project/kim-snatch/pkg/version.version=${version} -X github.com/kyma-project/kim-snatch/pkg/version.revision=${revision}" \
	-o "${out}/${binary}" \
	"$pkg"
