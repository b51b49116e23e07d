#!/bin/sh
# Builds the container images of both binaries, or of the ones named:
#
#   VERSION=v1.2.3 hack/build/docker-build.sh [webhook] [syncer]
#
# Image names come from IMG_WEBHOOK and IMG_SYNCER (default
# snatch-webhook:$VERSION and cabundle-syncer:$VERSION). A Docker engine is
# needed; without one this fails at once and says so.
set -eu

cd "$(dirname "$0")/../.."

version=${VERSION:-dev}
revision=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
img_webhook=${IMG_WEBHOOK:-snatch-webhook:${version}}
img_syncer=${IMG_SYNCER:-cabundle-syncer:${version}}

if ! command -v docker >/dev/null 2>&1; then
	echo "docker-build: the docker CLI is not installed, so images cannot be built on this machine." >&2
	echo "docker-build: the binaries themselves build without Docker: hack/build/build-binary.sh <snatch-webhook|cabundle-syncer>" >&2
	exit 1
fi
if ! docker info >/dev/null 2>&1; then
	echo "docker-build: no Docker engine is reachable ('docker info' failed), so images cannot be built on this machine." >&2
	echo "docker-build: start a Docker engine or set DOCKER_HOST; the binaries themselves build without Docker: hack/build/build-binary.sh <snatch-webhook|cabundle-syncer>" >&2
	exit 1
fi

[ $# -gt 0 ] || set -- webhook syncer
for image in "$@"; do
	case $image in
	webhook) dockerfile=Dockerfile.webhook tag=$img_webhook ;;
	syncer) dockerfile=Dockerfile.syncer tag=$img_syncer ;;
	*)
		echo "docker-build: unknown image '$image'; want webhook or syncer" >&2
		exit 2
		;;
	esac
	echo "docker-build: building $tag from $dockerfile"
	docker build -f "$dockerfile" --build-arg "VERSION=${version}" --build-arg "REVISION=${revision}" -t "$tag" .
done
