#!/usr/bin/env bash
# Releases one binary on its own line (docs/releasing.md):
#
#   KUBECTL=bin/k8s-v1.36.3/kubectl hack/release.sh snatch-webhook v0.1.0
#
# or `make release BINARY=snatch-webhook VERSION=v0.1.0`. It writes
# dist/<binary>/<version>/:
#
#   install.yaml              that binary's base, the image pinned to the
#                             version, or to DIGEST=sha256:... when given
#   <binary>-linux-amd64      static binaries, built by hack/build-binary.sh
#   <binary>-linux-arm64
#   SHA256SUMS                of the three files above
#   RELEASE_NOTES.md          the version's section of CHANGELOG.md
#
# It refuses a dirty work tree, a version that is not semver, a version with
# no CHANGELOG section, and a version whose tag <binary>/<version> exists.
# The release workflow runs it on that tag, so there RELEASE_TAG_AT_HEAD=1
# accepts the tag when it points at HEAD.
#
# The image: it prints the `docker buildx build ... --push` command that
# builds and pushes the multi-arch image, and runs it with PUSH=1 (which
# needs a Docker engine). A release of one binary reads only that binary's
# base, Dockerfile and CHANGELOG section, and writes only its own dist/
# directory.
set -euo pipefail

cd "$(dirname "$0")/.."

die() {
	echo "release: $*" >&2
	exit 1
}

[ $# -eq 2 ] || {
	echo "usage: KUBECTL=<kubectl> $0 <snatch-webhook|cabundle-syncer> <vX.Y.Z>" >&2
	exit 2
}
binary=$1
version=$2
kubectl=${KUBECTL:-kubectl}
registry=${REGISTRY:-europe-docker.pkg.dev/kyma-project/prod}

case $binary in
snatch-webhook) base=deploy/webhook dockerfile=Dockerfile.webhook ;;
cabundle-syncer) base=deploy/syncer dockerfile=Dockerfile.syncer ;;
*) die "unknown binary '$binary'; want snatch-webhook or cabundle-syncer" ;;
esac

# Semantic Versioning 2.0.0, with the v of the tags.
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[[ $version =~ $semver ]] || die "version '$version' is not semver (vMAJOR.MINOR.PATCH[-pre][+build])"

[ -z "$(git status --porcelain)" ] || die "the work tree is not clean; commit or stash first:
$(git status --short)"

tag="$binary/$version"
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
	if [ "${RELEASE_TAG_AT_HEAD:-}" != 1 ] || [ "$(git rev-parse "refs/tags/$tag^{commit}")" != "$(git rev-parse HEAD)" ]; then
		die "$tag is already tagged; a released version is never built again"
	fi
fi

# The notes: from "### <version>" under "## <binary>" to the next heading
# of either level.
notes=$(awk -v bin="## $binary" -v ver="### $version" '
	/^## / { inbin = ($0 == bin); inver = 0; next }
	/^### / { inver = (inbin && $0 == ver); if (inver) found = 1; next }
	inver { print }
	END { if (!found) exit 3 }
' CHANGELOG.md | sed '/./,$!d') || die "CHANGELOG.md has no section '### $version' under '## $binary'"
[ -n "$(printf '%s' "$notes" | tr -d '[:space:]')" ] || die "the section '### $version' under '## $binary' in CHANGELOG.md is empty"

image="$registry/$binary"
ref="$image:$version"
digest=${DIGEST:-}
if [ -n "$digest" ]; then
	[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "DIGEST '$digest' is not sha256:<64 hex digits>"
fi

out="dist/$binary/$version"
rm -rf "$out"
mkdir -p "$out"

# install.yaml: the base through a throwaway overlay that pins the image.
overlay=$(mktemp -d "$PWD/dist/.overlay-XXXXXX")
trap 'rm -rf "$overlay"' EXIT
{
	echo "apiVersion: kustomize.config.k8s.io/v1beta1"
	echo "kind: Kustomization"
	echo "resources:"
	echo "  - ../../$base"
	echo "images:"
	echo "  - name: $image"
	if [ -n "$digest" ]; then
		echo "    digest: $digest"
	else
		echo "    newTag: $version"
	fi
} >"$overlay/kustomization.yaml"
{
	echo "# $binary $version: kubectl apply --server-side -f install.yaml"
	"$kubectl" kustomize "$overlay"
} >"$out/install.yaml"

for arch in amd64 arm64; do
	GOOS=linux GOARCH=$arch VERSION=$version hack/build-binary.sh "$binary" "$overlay/$arch"
	mv "$overlay/$arch/$binary" "$out/$binary-linux-$arch"
done

(cd "$out" && sha256sum install.yaml "$binary-linux-amd64" "$binary-linux-arm64" >SHA256SUMS)
printf '# %s %s\n\n%s\n' "$binary" "$version" "$notes" >"$out/RELEASE_NOTES.md"

build=(docker buildx build --platform linux/amd64,linux/arm64 -f "$dockerfile" --build-arg "VERSION=$version" -t "$ref" --push .)
if [ "${PUSH:-}" = 1 ]; then
	command -v docker >/dev/null 2>&1 || die "PUSH=1 needs the docker CLI and a Docker engine"
	"${build[@]}"
else
	echo "release: the image is built and pushed by (PUSH=1 runs it):"
	echo "  ${build[*]}"
fi

echo "release: wrote $out:"
ls -l "$out"
