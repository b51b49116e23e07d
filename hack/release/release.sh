#!/usr/bin/env bash
# Releases one binary on its own line (docs/releasing.md):
#
#   KUBECTL=bin/k8s-v1.36.3/kubectl hack/release/release.sh snatch-webhook v0.1.0
#
# or `make release BINARY=snatch-webhook VERSION=v0.1.0`. It writes
# dist/<binary>/<version>/:
#
#   install.yaml              that binary's base, the image pinned to the
#                             version, or to DIGEST=sha256:... when given
#   migration.yaml            snatch-webhook only: deploy/migration/webhook,
#                             pinned the same way, for step 4 of
#                             docs/migration.md
#   <binary>-linux-amd64      static binaries, built by hack/build/build-binary.sh
#   <binary>-linux-arm64      with REVISION (default: git rev-parse HEAD)
#   <binary>-<os>-<arch>.cdx.json
#                             the CycloneDX SBOM of each binary, written by
#                             cyclonedx-gomod from the binary itself
#   <binary>-<os>-<arch>.sigstore.json
#                             the cosign signature (a bundle) of each binary
#   <binary>-image-linux-<arch>.cdx.json
#                             with DIGEST: the CycloneDX SBOM of the image
#                             that ships, <registry>/<binary>@<DIGEST>, on
#                             that platform: its base image by digest (the
#                             Dockerfile's final FROM) and its binary's
#                             modules
#   SHA256SUMS                of every file but the notes and the signatures
#   SHA256SUMS.sigstore.json  the cosign signature of SHA256SUMS
#   RELEASE_NOTES.md          the version's section of CHANGELOG.md
#
# COSIGN_KEY is the signing key, as cosign takes it: a file of
# `cosign generate-key-pair`, or env://<VAR> (the release workflow's secret);
# COSIGN_PASSWORD its password. COSIGN and CYCLONEDX_GOMOD name the tools
# (the Makefile builds them into bin/). Signatures are made with the key
# alone, not logged in a transparency log, and verify offline
# (docs/releasing.md, "Verifying a release"). With DIGEST, the image
# <registry>/<binary>@<DIGEST> is signed as well, in its registry, and
# carries each of its image SBOMs as a signed CycloneDX attestation.
#
# The release ships no public key: operators take it from the repository at
# the release's tag, the committed cosign.pub, which no release asset can
# replace (docs/releasing.md, "Signing"). So the release refuses a key whose
# public half is not that file.
#
# and for cabundle-syncer, whose `check` operators run from their own
# machines, also:
#
#   cabundle-syncer-darwin-amd64, cabundle-syncer-darwin-arm64
#   kubectl-kim_snatch-<os>-<arch>.tar.gz   the binary as the kubectl plugin
#                             kubectl-kim_snatch (and LICENSE, if there is
#                             one), for each of the four platforms
#   kim-snatch.yaml           hack/release/krew/kim-snatch.yaml.tmpl filled with the
#                             version, the archives' URLs and their sums
#
# It refuses a dirty work tree, a version that is not semver, a version with
# no CHANGELOG section or one that holds only its headings, a version whose
# tag <binary>/<version> exists, and a commit without cosign.pub. It never
# creates the tag. The release workflow runs it on that tag, so there
# RELEASE_TAG_AT_HEAD=1 accepts the tag when it points at HEAD.
#
#   hack/release/release.sh --check <binary> <version>
#
# runs only these checks; the release workflow runs them before anything
# else.
#
# The image: it prints the `docker buildx build ... --push` command that
# builds and pushes the multi-arch image, and runs it with PUSH=1 (which
# needs a Docker engine). A release of one binary reads only that binary's
# base, Dockerfile and CHANGELOG section, and writes only its own dist/
# directory.
#
# What this script promises is tested in test/manifests (the TestRelease...
# tests): change the two together.
#
#   hack/release/release.sh --manifests <dir> <binary> <version>
#
# writes only the manifests of that release (install.yaml, and migration.yaml
# of snatch-webhook) into <dir>, rendered as above, without the checks of the
# work tree, the CHANGELOG and the tag, and without building anything. The
# tests of test/docs render with it what the documented commands apply, and
# the migration scenario of test/e2e/migration the files its guide names.
#
#   hack/release/release.sh --platforms <binary>
#
# prints the platforms a release of that binary ships binaries for, as
# GOOS/GOARCH; make vuln checks each of them.
#
# The module kim-snatch, which Kyma's lifecycle-manager installs on every
# runtime (docs/releasing.md, "The module"), is released from two binary
# releases, one of each binary, by
#
#   hack/release/release.sh [--check] --module <module-version> <webhook-version> <syncer-version>
#
# for example `hack/release/release.sh --module 2.0.0 v0.3.0 v0.2.1`, with KUBECTL,
# COSIGN and COSIGN_KEY as above. The module version is lifecycle-manager's:
# MAJOR.MINOR.PATCH without a v, and one lower-case pre-release identifier
# at most. It reads each binary's release from dist/<binary>/<version>/
# (install.yaml, SHA256SUMS and SHA256SUMS.sigstore.json, as make release
# writes them or as deploy/README.md, "Verifying a release", downloads
# them), checks SHA256SUMS's signature with the key of the repository at
# the binary's tag and install.yaml against it, and writes
# dist/kim-snatch/<module-version>/:
#
#   module.yaml               the module's one manifest, which
#                             lifecycle-manager applies: snatch-webhook's
#                             install.yaml, then cabundle-syncer's, each
#                             without its ServiceMonitors and
#                             PrometheusRules (deploy/module/manifest)
#   monitoring.yaml           those, and only those (deploy/module/monitoring),
#                             for a runtime with prometheus-operator
#   SHA256SUMS, SHA256SUMS.sigstore.json, RELEASE_NOTES.md
#                             as for a binary, the notes naming the pair
#
# Every object carries app.kubernetes.io/version, its binary's version, and
# the annotation kim-snatch.kyma-project.io/module-version. The webhook
# comes first: lifecycle-manager reads the state of a module from its
# manifest's first Deployment or StatefulSet. It refuses a module version
# lifecycle-manager does not take or whose tag kim-snatch/<module-version>
# exists, a binary version that is not tagged or has build metadata (a
# label value cannot hold the +), a dirty work tree, a commit without
# cosign.pub, a binary release that is missing, not signed with the key at
# its tag, or whose install.yaml is not the one it lists or is another
# binary's or version's. It never creates the tag. With --check it runs
# the checks that read nothing of dist/ and stops. The TestModule... tests
# of test/manifests hold it to this.
#
# The bridge versions carry a runtime from the single-binary kim-snatch
# module to the module <module-version>, M, one step of lifecycle-manager
# at a time, each safe forward and back (docs/releasing.md, "The bridge
# versions"; docs/migration.md, "Through lifecycle-manager"):
#
#   KIM_SNATCH_MANIFEST=<kim-snatch.yaml> hack/release/release.sh [--check] --module <M>-bridge-<N> <webhook-version> <syncer-version>
#
# for N from 1 to 5, with KIM_SNATCH_MANIFEST the manifest of the
# kim-snatch release the runtimes run, which it is built from. It writes
# dist/kim-snatch/<M>-bridge-<N>/ as above, module.yaml being the bridge
# version: kim-snatch's manifest and the binaries' parts (cabundle-syncer's
# alone in bridge-1), each through its step's Components of
# deploy/module/bridge (step-<N>/kim-snatch, step-<N>/webhook), then the
# whole through step-<N>; for lifecycle-manager's state check
# cabundle-syncer's part first in bridge-1, kim-snatch's in bridge-3,
# snatch-webhook's in the others. kim-snatch's objects keep their labels, CustomResourceDefinitions
# and Namespace included, and get the annotation. The release holds the
# manifest too, as kim-snatch-manifest.yaml, which SHA256SUMS lists, and
# its notes name the step and the manifest's sha256. Besides the refusals
# above, it refuses a bridge version without KIM_SNATCH_MANIFEST, of a
# step outside 1 to 5, and a manifest that lacks what the steps change
# (deploy/module/bridge/check: the Deployment
# kim-snatch-controller-manager, the Service kim-snatch-webhook-service,
# the Certificate kim-snatch-kyma, the MutatingWebhookConfiguration with
# the entry mpod-v1.kb.io); --check checks the manifest too. It refuses
# KIM_SNATCH_MANIFEST for any other version. The TestModuleBridge... tests
# of test/manifests hold it to this.
#
#   hack/release/release.sh --module-manifests <dir> <module-version> <webhook-version> <syncer-version> [<kim-snatch.yaml>]
#
# writes into <dir> module.yaml and monitoring.yaml of <module-version>,
# and with kim-snatch's manifest also bridge-1.yaml to bridge-5.yaml, the
# module.yaml of <module-version>-bridge-1 to -5. It reads each binary's
# dist/<binary>/<version>/install.yaml, as --manifests renders it, without
# the checks of the releases, the work tree and the tags. The tests of
# test/manifests and the migration scenario of test/e2e render with it.
set -euo pipefail

# platforms_of prints the platforms of binary $1's release.
platforms_of() {
	case $1 in
	snatch-webhook) echo "linux/amd64 linux/arm64" ;;
	cabundle-syncer) echo "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64" ;;
	*) return 1 ;;
	esac
}

if [ "${1:-}" = --platforms ]; then
	if [ $# -ne 2 ] || ! platforms_of "$2"; then
		echo "usage: $0 --platforms <snatch-webhook|cabundle-syncer>" >&2
		exit 2
	fi
	exit 0
fi

manifests_only='' check_only=''
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi
if [ "${1:-}" = --manifests ]; then
	[ $# -eq 4 ] || {
		echo "usage: KUBECTL=<kubectl> $0 --manifests <dir> <snatch-webhook|cabundle-syncer> <vX.Y.Z>" >&2
		exit 2
	}
	case $2 in
	/*) manifests_only=$2 ;;
	*) manifests_only=$PWD/$2 ;;
	esac
	shift 2
fi
module_mode='' module_manifests=''
if [ "${1:-}" = --module ]; then
	module_mode=1
	shift
fi
if [ "${1:-}" = --module-manifests ] && [ -z "$check_only$manifests_only$module_mode" ]; then
	[ $# -eq 5 ] || [ $# -eq 6 ] || {
		echo "usage: KUBECTL=<kubectl> $0 --module-manifests <dir> <module-version> <webhook-version>" \
			"<syncer-version> [<kim-snatch.yaml>]" >&2
		exit 2
	}
	module_mode=1 module_manifests=$(realpath -m -- "$2")
	shift 2
	[ $# -eq 3 ] || set -- "$1" "$2" "$3" "$(realpath -m -- "$4")"
fi
# The manifest of the kim-snatch release that the bridge versions are built
# from, named from where the script was called.
kim_snatch_manifest=${KIM_SNATCH_MANIFEST:+$(realpath -m -- "$KIM_SNATCH_MANIFEST")}

cd "$(dirname "$0")/../.."

die() {
	echo "release: $*" >&2
	exit 1
}

# Semantic Versioning 2.0.0, with the v of the tags.
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'

# trusted_key is the public key operators verify every release with, read
# from the repository at the release's tag, never from the release.
trusted_key=cosign.pub

# refuse_tagged refuses the release of tag $1, which is never built again
# once tagged; the release workflow, which runs on the tag, sets
# RELEASE_TAG_AT_HEAD=1 to accept it at HEAD.
refuse_tagged() {
	git rev-parse -q --verify "refs/tags/$1" >/dev/null || return 0
	local at
	at=$(git rev-parse "refs/tags/$1^{commit}")
	if [ "${RELEASE_TAG_AT_HEAD:-}" != 1 ] || [ "$at" != "$(git rev-parse HEAD)" ]; then
		die "$1 is already tagged; a released version is never built again"
	fi
}

# refuse_dirty refuses a work tree with changes, and a commit without the
# trusted key.
refuse_dirty() {
	[ -z "$(git status --porcelain)" ] || die "the work tree is not clean; commit or stash first:
$(git status --short)"
	git cat-file -e "HEAD:$trusted_key" 2>/dev/null ||
		die "$trusted_key is not committed: operators verify a release with the key of the repository" \
			"at its tag (docs/releasing.md, \"Signing\")"
}

# signing_tools sets cosign and key, and refuses a missing key, a missing
# tool (cosign and those named in $@), and a key whose public half is not
# the committed one: every release is signed with the key operators trust.
signing_tools() {
	cosign=${COSIGN:-cosign}
	key=${COSIGN_KEY:-}
	[ -n "$key" ] || die "COSIGN_KEY is not set: every release is signed (docs/releasing.md, \"Signing\");" \
		"for a local check, sign with a throwaway key of \`cosign generate-key-pair\`"
	local tool
	for tool in "$cosign" "$@"; do
		command -v "$tool" >/dev/null 2>&1 || die "$tool is not installed; make release builds it into bin/"
	done
	"$cosign" public-key --key "$key" | cmp -s - "$trusted_key" ||
		die "the public half of COSIGN_KEY is not the committed $trusted_key;" \
			"sign with the project's key (docs/releasing.md, \"Signing\")"
}

# sign_blob signs the file $1 of the release in $out with the key alone,
# offline; cosign writes its files for the owner only, the release
# publishes them.
sign_blob() {
	"$cosign" sign-blob --yes --key "$key" --tlog-upload=false --bundle "$out/$1.sigstore.json" "$out/$1" >/dev/null
	chmod 0644 "$out/$1.sigstore.json"
}

# krew_plugin packs each binary of $out as the kubectl plugin
# kubectl-kim_snatch (krew's name for the plugin kim-snatch), one .tar.gz
# per platform, and fills the krew manifest with their URLs and sums. The
# archives are reproducible: sorted, owned by root, dated at the commit.
krew_plugin() {
	local template=hack/release/krew/kim-snatch.yaml.tmpl
	local download="https://github.com/kyma-project/kim-snatch/releases/download/$binary/$version"
	local stamp manifest
	stamp=$(git log -1 --format=%ct HEAD)
	manifest=$(sed -e '/^#/d' -e "s|{{VERSION}}|$version|g" -e "s|{{DOWNLOAD}}|$download|g" "$template")
	for platform in $platforms; do
		local os=${platform%/*} arch=${platform#*/}
		local pack="$overlay/krew-$os-$arch" archive="kubectl-kim_snatch-$os-$arch.tar.gz"
		mkdir -p "$pack"
		local members=(kubectl-kim_snatch)
		cp "$out/$binary-$os-$arch" "$pack/kubectl-kim_snatch"
		if [ -f LICENSE ]; then
			cp LICENSE "$pack/LICENSE"
			members+=(LICENSE)
		fi
		tar -C "$pack" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -cf - "${members[@]}" | gzip -9n >"$out/$archive"
		manifest=${manifest//"{{SHA256_${os}_${arch}}}"/$(sha256sum "$out/$archive" | cut -d' ' -f1)}
		files+=("$archive")
	done
	case $manifest in
	*'{{'*) die "$template has a field make release does not fill: $(printf '%s\n' "$manifest" | grep -F '{{' | head -1)" ;;
	esac
	printf '%s\n' "$manifest" >"$out/kim-snatch.yaml"
	files+=(kim-snatch.yaml)
}

# --- The module kim-snatch (docs/releasing.md, "The module") ---

module_name=kim-snatch
# What lifecycle-manager takes as a module version (its ModuleTemplate's
# spec.version): no v, at most one pre-release identifier, lower case, as
# the version ends the ModuleTemplate's name kim-snatch-<version>.
module_semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[a-z-][0-9a-z-]*)?$'
module_annotation=kim-snatch.kyma-project.io/module-version
# The binaries in the order of module.yaml: lifecycle-manager reads a
# module's state from the first Deployment or StatefulSet of its manifest,
# and the webhook's is the one that tells whether Kyma's Pods are placed.
module_binaries="snatch-webhook cabundle-syncer"

# version_of prints the version of binary $1 in the module.
version_of() {
	case $1 in
	snatch-webhook) echo "$webhook_version" ;;
	cabundle-syncer) echo "$syncer_version" ;;
	esac
}

# version_checks refuses a module version lifecycle-manager does not take,
# and binary versions a label cannot hold.
version_checks() {
	if ! [[ $module_version =~ $module_semver ]] || [ ${#module_version} -gt 32 ]; then
		die "module version '$module_version' is not one lifecycle-manager takes: MAJOR.MINOR.PATCH[-prerelease]" \
			"without a v, one lower-case pre-release identifier, at most 32 characters"
	fi
	local b v
	for b in $module_binaries; do
		v=$(version_of "$b")
		[[ $v =~ $semver ]] || die "$b version '$v' is not semver (vMAJOR.MINOR.PATCH[-pre])"
		[[ $v != *+* ]] || die "$b version '$v' has build metadata, which the label app.kubernetes.io/version cannot hold"
	done
}

# bridge_checks sets bridge_step (1 to 5) and bridge_module (M) of a bridge
# version M-bridge-<step>, and refuses one of another step or without
# kim-snatch's manifest; it refuses that manifest for any other version.
bridge_checks() {
	bridge_step='' bridge_module=''
	if [[ $module_version != *-bridge* ]]; then
		[ -z "$kim_snatch_manifest" ] ||
			die "KIM_SNATCH_MANIFEST is set, but $module_version is not a bridge version <module-version>-bridge-<1..5>"
		return 0
	fi
	[[ $module_version =~ ^(.+)-bridge-([1-5])$ ]] ||
		die "bridge version '$module_version' is not <module-version>-bridge-<step> of a step 1 to 5"
	bridge_module=${BASH_REMATCH[1]} bridge_step=${BASH_REMATCH[2]}
	[ -n "$kim_snatch_manifest" ] ||
		die "the bridge version $module_version is built from kim-snatch's manifest: set KIM_SNATCH_MANIFEST" \
			"to the manifest of the kim-snatch release the runtimes run"
	[ -f "$kim_snatch_manifest" ] || die "KIM_SNATCH_MANIFEST: $kim_snatch_manifest is not a file"
}

# check_kim_snatch_manifest refuses a kim-snatch manifest that lacks an
# object the bridge versions change: it renders it through
# deploy/module/bridge/check, which fails on the first one missing.
check_kim_snatch_manifest() {
	local err
	part_overlay kim-snatch-check "$kim_snatch_manifest" kim-snatch.yaml "" "" bridge/check
	err=$("$kubectl" kustomize "$overlay/kim-snatch-check" 2>&1 >/dev/null) ||
		die "the kim-snatch manifest $kim_snatch_manifest lacks what the bridge versions change (the Deployment" \
			"kim-snatch-controller-manager, the Service kim-snatch-webhook-service, the Certificate kim-snatch-kyma," \
			"the MutatingWebhookConfiguration with the entry mpod-v1.kb.io): $err"
}

# module_checks refuses what docs/releasing.md, "The module" and "The
# bridge versions", lists, but the files it reads after these checks: the
# binary releases' and kim-snatch's manifest.
module_checks() {
	version_checks
	bridge_checks
	refuse_dirty
	refuse_tagged "$module_name/$module_version"
	for b in $module_binaries; do
		v=$(version_of "$b")
		git rev-parse -q --verify "refs/tags/$b/$v" >/dev/null ||
			die "$b/$v is not tagged: a module holds released binaries only"
	done
}

# verify_binary_release checks the release of binary $1 in dist/ as
# operators verify a release (deploy/README.md, "Verifying a release"):
# SHA256SUMS against its signature, with the key of the repository at the
# binary's tag, and install.yaml against SHA256SUMS. Then install.yaml must
# be that binary's and version's, each image of it pinned to the version
# or a digest.
verify_binary_release() {
	local binary=$1 version dir f img pinned=
	version=$(version_of "$binary")
	dir=dist/$binary/$version
	for f in install.yaml SHA256SUMS SHA256SUMS.sigstore.json; do
		[ -f "$dir/$f" ] || die "$dir/$f is missing: make release writes it, or download and verify the release" \
			"as deploy/README.md, \"Verifying a release\", does"
	done
	git show "refs/tags/$binary/$version:$trusted_key" >"$overlay/$binary.pub" 2>/dev/null ||
		die "the tag $binary/$version has no $trusted_key to verify its release with"
	"$cosign" verify-blob --key "$overlay/$binary.pub" --bundle "$dir/SHA256SUMS.sigstore.json" \
		--insecure-ignore-tlog=true "$dir/SHA256SUMS" >/dev/null 2>&1 ||
		die "$dir/SHA256SUMS does not verify with the key at the tag $binary/$version"
	awk '$2 == "install.yaml"' "$dir/SHA256SUMS" | (cd "$dir" && sha256sum --check --strict --status -) ||
		die "$dir/install.yaml is not the install.yaml its SHA256SUMS lists"
	[[ $(head -1 "$dir/install.yaml") == "# $binary $version, "* ]] ||
		die "$dir/install.yaml is not the install.yaml of $binary $version"
	while read -r img; do
		pinned=1
		[[ $img == */"$binary:$version" || $img =~ /$binary@sha256:[0-9a-f]{64}$ ]] ||
			die "$dir/install.yaml runs $img, not $binary pinned to $version or a digest"
	done < <(sed -n 's/^ *image: //p' "$dir/install.yaml" | sort -u)
	[ -n "$pinned" ] || die "$dir/install.yaml runs no image"
}

# part_overlay writes the overlay $overlay/$1 over the file $2, copied
# there as $3, through the Components of deploy/module named in the rest
# of the arguments: each object annotated with the module version $5, and
# labelled with its binary's version $4 unless that is empty (kim-snatch's
# objects keep what they have). The annotation stays out of the Pod
# templates, so that a new module version restarts only the binary whose
# version it changes.
part_overlay() {
	local dir=$overlay/$1 file=$2 name=$3 version=$4 annotated=$5 c
	shift 5
	mkdir -p "$dir"
	cp "$file" "$dir/$name"
	{
		printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\n' "$name"
		echo "components:"
		for c; do
			echo "  - ../../../deploy/module/$c"
		done
		[ -z "$version" ] || cat <<YAML
labels:
  - pairs:
      app.kubernetes.io/version: "$version"
    includeSelectors: false
    includeTemplates: true
YAML
		cat <<YAML
transformers:
  - |-
    apiVersion: builtin
    kind: AnnotationsTransformer
    metadata:
      name: module-version
    annotations:
      $module_annotation: "$annotated"
    fieldSpecs:
      - path: metadata/annotations
        create: true
YAML
	} >"$dir/kustomization.yaml"
}

# module_part renders to stdout the install.yaml of binary $1 through the
# Component deploy/module/$2 (manifest or monitoring), as part_overlay
# marks it.
module_part() {
	local binary=$1 component=$2 version
	version=$(version_of "$binary")
	part_overlay "$binary-$component" "dist/$binary/$version/install.yaml" install.yaml "$version" \
		"$module_version" "$component"
	"$kubectl" kustomize "$overlay/$binary-$component"
}

# write_module writes module.yaml and monitoring.yaml of the module
# version $module_version into $out, each the binaries' parts in the order
# of module_binaries.
write_module() {
	local entry file component b sep
	for entry in module.yaml:manifest monitoring.yaml:monitoring; do
		file=${entry%%:*} component=${entry#*:}
		sep=
		{
			echo "# $module_name $module_version: snatch-webhook $webhook_version, cabundle-syncer $syncer_version ($file)"
			for b in $module_binaries; do
				printf '%s' "$sep"
				module_part "$b" "$component"
				sep=$'---\n'
			done
		} >"$out/$file"
	done
}

# bridge_parts prints the parts of bridge-$1 in their order: the first
# Deployment is the one lifecycle-manager reads the version's state from.
# bridge-1 has no snatch-webhook, whose Pods would not get ready before
# bridge-2 names its Service in the certificate; its Ready, read from
# cabundle-syncer, shows the syncer running before bridge-2 rotates the
# certificate. In bridge-3 it is kim-snatch's, so that its Ready shows the
# old Pods ready for a step back to bridge-2, and bridge-2's,
# snatch-webhook's, shows the new ones ready before bridge-3 sends them
# the old Service's calls; in bridge-4 and bridge-5 it is snatch-webhook's
# (docs/releasing.md, "The bridge versions").
bridge_parts() {
	case $1 in
	1) echo "cabundle-syncer kim-snatch" ;;
	3) echo "kim-snatch snatch-webhook cabundle-syncer" ;;
	*) echo "snatch-webhook cabundle-syncer kim-snatch" ;;
	esac
}

# write_bridge writes to $2 the module.yaml of bridge-$1 of the module
# $bridge_module: the parts of bridge_parts, and no other, each through its
# step's Component (deploy/module/bridge/step-$1/webhook and kim-snatch;
# the syncer's is its module part), then the whole through
# deploy/module/bridge/step-$1, which reads from one part what it writes
# into another. Kept in the parts' order: kustomize would sort by kind.
write_bridge() {
	local step=$1 file=$2 annotated=$bridge_module-bridge-$1 top=$overlay/bridge-$1 part sum
	for part in $(bridge_parts "$step"); do
		case $part in
		snatch-webhook)
			part_overlay "bridge-$step-$part" "dist/$part/$webhook_version/install.yaml" install.yaml \
				"$webhook_version" "$annotated" manifest "bridge/step-$step/webhook" ;;
		cabundle-syncer)
			part_overlay "bridge-$step-$part" "dist/$part/$syncer_version/install.yaml" install.yaml \
				"$syncer_version" "$annotated" manifest ;;
		kim-snatch)
			part_overlay "bridge-$step-$part" "$kim_snatch_manifest" kim-snatch.yaml "" "$annotated" \
				"bridge/step-$step/kim-snatch" ;;
		esac
	done
	mkdir -p "$top"
	{
		printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n'
		for part in $(bridge_parts "$step"); do
			echo "  - ../bridge-$step-$part"
		done
		printf 'components:\n  - ../../../deploy/module/bridge/step-%s\n' "$step"
		printf 'sortOptions:\n  order: fifo\n'
	} >"$top/kustomization.yaml"
	sum=$(sha256sum "$kim_snatch_manifest" | cut -d' ' -f1)
	{
		echo "# $module_name $annotated: snatch-webhook $webhook_version, cabundle-syncer $syncer_version," \
			"kim-snatch manifest sha256:$sum (bridge-$step of docs/releasing.md, \"The bridge versions\")"
		"$kubectl" kustomize "$top"
	} >"$file"
}

# bridge_step_notes prints what bridge-$1 changes, for its notes.
bridge_step_notes() {
	case $1 in
	1) echo "kim-snatch's manifest unchanged, with cabundle-syncer beside it and no snatch-webhook;" \
		"nothing routes differently" ;;
	2) echo "kim-snatch's Certificate also names snatch-webhook's Service, and snatch-webhook is there, without" \
		"its MutatingWebhookConfiguration and Certificate" ;;
	3) echo "kim-snatch's webhook Service selects snatch-webhook's Pods" ;;
	4) echo "kim-snatch's Deployment, ServiceAccount and RBAC removed; the MutatingWebhookConfiguration" \
		"holds kim-snatch's entry, active, and snatch-webhook's, inert" ;;
	5) echo "snatch-webhook's entry active, kim-snatch's inert" ;;
	esac
}

# module_notes writes the notes of the module release: the pair, and where
# each binary's notes are.
module_notes() {
	local repo b
	repo=https://$(sed -n 's/^module //p' go.mod)
	{
		printf '# %s %s\n\n' "$module_name" "$module_version"
		printf 'The module %s %s installs snatch-webhook %s and cabundle-syncer %s,\n' \
			"$module_name" "$module_version" "$webhook_version" "$syncer_version"
		printf 'each from the install.yaml of its release. ServiceMonitors and PrometheusRules are\n'
		printf 'in monitoring.yaml, for runtimes with prometheus-operator.\n\n'
		if [ -n "$bridge_step" ]; then
			printf 'It is bridge-%s of the five bridge versions from kim-snatch to the module %s %s\n' \
				"$bridge_step" "$module_name" "$bridge_module"
			printf '(docs/releasing.md, "The bridge versions"; docs/migration.md, "Through lifecycle-manager"):\n'
			printf '%s.\n\n' "$(bridge_step_notes "$bridge_step")"
			printf 'Built from the kim-snatch manifest kim-snatch-manifest.yaml, sha256:%s.\n\n' \
				"$(sha256sum "$kim_snatch_manifest" | cut -d' ' -f1)"
		fi
		for b in $module_binaries; do
			printf -- '- %s %s: %s/releases/tag/%s/%s\n' "$b" "$(version_of "$b")" "$repo" "$b" "$(version_of "$b")"
		done
	} >"$out/RELEASE_NOTES.md"
}

# release_module releases the module of the two binary versions in $@
# (the usage above).
release_module() {
	[ $# -eq 3 ] || {
		echo "usage: KUBECTL=<kubectl> COSIGN=<cosign> COSIGN_KEY=<key> [KIM_SNATCH_MANIFEST=<kim-snatch.yaml>]" \
			"$0 [--check] --module <module-version>[-bridge-<1..5>] <webhook-version> <syncer-version>" >&2
		exit 2
	}
	module_version=$1 webhook_version=$2 syncer_version=$3
	kubectl=${KUBECTL:-kubectl}
	module_checks
	mkdir -p dist
	overlay=$(mktemp -d "$PWD/dist/.overlay-XXXXXX")
	trap 'rm -rf "$overlay"' EXIT
	[ -z "$bridge_step" ] || check_kim_snatch_manifest
	if [ -n "$check_only" ]; then
		echo "release: $module_name $module_version passes the checks"
		exit 0
	fi
	signing_tools
	local b sums=(module.yaml monitoring.yaml)
	for b in $module_binaries; do
		verify_binary_release "$b"
	done
	out=dist/$module_name/$module_version
	rm -rf "$out"
	mkdir -p "$out"
	write_module
	if [ -n "$bridge_step" ]; then
		write_bridge "$bridge_step" "$out/module.yaml"
		cp "$kim_snatch_manifest" "$out/kim-snatch-manifest.yaml"
		sums+=(kim-snatch-manifest.yaml)
	fi
	module_notes
	(cd "$out" && sha256sum "${sums[@]}" >SHA256SUMS)
	sign_blob SHA256SUMS
	echo "release: wrote $out:"
	ls -l "$out"
}

# module_manifests writes into $module_manifests the manifests of the
# module version $1 of the binary versions $2 and $3, from their
# install.yaml in dist/ without a check of their releases, and with
# kim-snatch's manifest $4 also its bridge versions (the usage above).
module_manifests() {
	module_version=$1 webhook_version=$2 syncer_version=$3 kim_snatch_manifest=${4:-}
	kubectl=${KUBECTL:-kubectl}
	version_checks
	[[ $module_version != *-bridge* ]] ||
		die "give the module version M; the bridge versions are M-bridge-<1..5>, not $module_version-bridge-<1..5>"
	local b step
	for b in $module_binaries; do
		[ -f "dist/$b/$(version_of "$b")/install.yaml" ] ||
			die "dist/$b/$(version_of "$b")/install.yaml is missing: hack/release/release.sh --manifests renders it"
	done
	mkdir -p "$module_manifests" dist
	overlay=$(mktemp -d "$PWD/dist/.overlay-XXXXXX")
	trap 'rm -rf "$overlay"' EXIT
	out=$module_manifests
	write_module
	if [ -n "$kim_snatch_manifest" ]; then
		[ -f "$kim_snatch_manifest" ] || die "$kim_snatch_manifest is not a file"
		bridge_module=$module_version
		check_kim_snatch_manifest
		for step in 1 2 3 4 5; do
			module_version=$bridge_module-bridge-$step
			version_checks
			write_bridge "$step" "$out/bridge-$step.yaml"
		done
	fi
	echo "release: wrote the manifests of $module_name $1${kim_snatch_manifest:+ and its bridge versions}" \
		"into $module_manifests"
}

if [ -n "$module_manifests" ]; then
	module_manifests "$@"
	exit 0
fi
if [ -n "$module_mode" ]; then
	release_module "$@"
	exit 0
fi

[ $# -eq 2 ] || {
	echo "usage: KUBECTL=<kubectl> $0 <snatch-webhook|cabundle-syncer> <vX.Y.Z>" >&2
	exit 2
}
binary=$1
version=$2
kubectl=${KUBECTL:-kubectl}
# The bases name the images in the project's registry; REGISTRY moves a
# release to another (a mirror, or the tests' registry on loopback).
base_registry=europe-docker.pkg.dev/kyma-project/prod
registry=${REGISTRY:-$base_registry}

# manifests: each file of the release and the kustomization it renders.
case $binary in
snatch-webhook)
	manifests="install.yaml:deploy/webhook migration.yaml:deploy/migration/webhook"
	dockerfile=Dockerfile.webhook
	;;
cabundle-syncer)
	manifests="install.yaml:deploy/syncer"
	dockerfile=Dockerfile.syncer
	;;
*) die "unknown binary '$binary'; want snatch-webhook or cabundle-syncer" ;;
esac
platforms=$(platforms_of "$binary")

[[ $version =~ $semver ]] || die "version '$version' is not semver (vMAJOR.MINOR.PATCH[-pre][+build])"

# release_checks refuses a dirty tree, a tagged version and missing notes,
# and sets notes to the version's CHANGELOG section.
release_checks() {
	refuse_dirty
	refuse_tagged "$binary/$version"

	# The notes: from "### <version>" under "## <binary>" to the next heading
	# of either level.
	notes=$(awk -v bin="## $binary" -v ver="### $version" '
		/^## / { inbin = ($0 == bin); inver = 0; next }
		/^### / { inver = (inbin && $0 == ver); if (inver) found = 1; next }
		inver { print }
		END { if (!found) exit 3 }
	' CHANGELOG.md | sed '/./,$!d') || die "CHANGELOG.md has no section '### $version' under '## $binary'"
	# Each release says what changed for operators under these headings, with
	# "none" where nothing did; headings alone are an empty section.
	local headings=("Flags" "Metrics" "Alerts" "Manifests" "Required steps") h
	[ -n "$(printf '%s\n' "$notes" | grep -v '^#### ' | tr -d '[:space:]')" ] ||
		die "the section '### $version' under '## $binary' in CHANGELOG.md is empty"
	for h in "${headings[@]}"; do
		# A here-string, not a pipe: grep -q stops at the first match, and
		# under pipefail the writer's SIGPIPE would fail the check.
		grep -qx "#### $h" <<<"$notes" ||
			die "the section '### $version' under '## $binary' in CHANGELOG.md has no heading '#### $h' (write \"none\" under it if nothing changed)"
	done
}

# base_image prints the final stage's base image of the Dockerfile $1, which
# must be pinned by digest: the image SBOM names it.
base_image() {
	local base
	base=$(awk 'toupper($1) == "FROM" { from = $0 } END { print from }' "$1" |
		awk '{ for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; exit } }')
	[[ $base =~ @sha256:[0-9a-f]{64}$ ]] || die "$1: the final stage's base '$base' is not pinned by digest"
	printf '%s\n' "$base"
}

# image_sbom writes to $3 the CycloneDX SBOM of the image $image@$digest on
# platform $2, from the SBOM $1 of its binary: the image is the described
# component, and it holds the base image $base and the binary with its
# modules.
image_sbom() {
	local base_name=${base%@*} base_digest=${base##*@}
	jq --arg image "$image" --arg digest "$digest" --arg platform "$2" \
		--arg base "${base_name%:*}" --arg baseTag "${base_name##*:}" --arg baseDigest "$base_digest" '
		.metadata.component as $bin
		| {type: "container", "bom-ref": ($image + "@" + $digest), name: $image, version: $digest,
		   purl: ("pkg:oci/" + ($image | split("/") | last) + "@" + ($digest | sub(":"; "%3A")) + "?repository_url=" + $image + "&arch=" + ($platform | split("/") | last)),
		   properties: [{name: "platform", value: $platform}]} as $img
		| {type: "container", "bom-ref": ($base + "@" + $baseDigest), name: $base, version: $baseDigest,
		   purl: ("pkg:oci/" + ($base | split("/") | last) + "@" + ($baseDigest | sub(":"; "%3A")) + "?repository_url=" + $base + "&tag=" + $baseTag)} as $baseImage
		| .metadata.component = $img
		| .components = [$baseImage, $bin] + .components
		| .dependencies = [{ref: $img["bom-ref"], dependsOn: [$baseImage["bom-ref"], $bin["bom-ref"]]}] + (.dependencies // [])
	' "$1" >"$3"
}

# stamp_runbooks points each alert's runbook_url, which the bases point at
# the documents on main, at the documents of this release, its tag
# <binary>/<version>: the cluster runs the release, and main may already
# document another. The repository is the one of the module path in go.mod.
stamp_runbooks() {
	local repo
	repo=https://$(sed -n 's/^module //p' go.mod)
	sed -e "s|\(runbook_url: $repo/blob/\)main/|\1$binary/$version/|"
}

# write_manifests renders each kustomization of manifests into its file in
# the directory $1, through a throwaway overlay that pins the image, and
# adds the files to files.
write_manifests() {
	local entry file kustomization
	for entry in $manifests; do
		file=${entry%%:*} kustomization=${entry#*:}
		{
			echo "apiVersion: kustomize.config.k8s.io/v1beta1"
			echo "kind: Kustomization"
			echo "resources:"
			echo "  - ../../$kustomization"
			echo "images:"
			echo "  - name: $base_registry/$binary"
			echo "    newName: $image"
			if [ -n "$digest" ]; then
				echo "    digest: $digest"
			else
				echo "    newTag: $version"
			fi
		} >"$overlay/kustomization.yaml"
		{
			echo "# $binary $version, $kustomization: kubectl apply --server-side -f $file"
			"$kubectl" kustomize "$overlay" | stamp_runbooks
		} >"$1/$file"
		files+=("$file")
	done
}

image="$registry/$binary"
ref="$image:$version"
digest=${DIGEST:-}
if [ -n "$digest" ]; then
	[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "DIGEST '$digest' is not sha256:<64 hex digits>"
fi
files=() binaries=()

if [ -n "$manifests_only" ]; then
	mkdir -p "$manifests_only" dist
	overlay=$(mktemp -d "$PWD/dist/.overlay-XXXXXX")
	trap 'rm -rf "$overlay"' EXIT
	write_manifests "$manifests_only"
	echo "release: wrote ${files[*]} into $manifests_only"
	exit 0
fi

release_checks
if [ -n "$check_only" ]; then
	echo "release: $binary $version passes the checks"
	exit 0
fi
revision=${REVISION:-$(git rev-parse HEAD)}
cyclonedx=${CYCLONEDX_GOMOD:-cyclonedx-gomod}
signing_tools "$cyclonedx"
if [ -n "$digest" ]; then
	command -v jq >/dev/null 2>&1 || die "jq is not installed; a release with DIGEST writes the image's SBOMs with it"
	base=$(base_image "$dockerfile")
fi

out="dist/$binary/$version"
rm -rf "$out"
mkdir -p "$out"

overlay=$(mktemp -d "$PWD/dist/.overlay-XXXXXX")
trap 'rm -rf "$overlay"' EXIT
write_manifests "$out"

for platform in $platforms; do
	os=${platform%/*} arch=${platform#*/}
	GOOS=$os GOARCH=$arch VERSION=$version REVISION=$revision hack/build/build-binary.sh "$binary" "$overlay/$os-$arch"
	mv "$overlay/$os-$arch/$binary" "$out/$binary-$os-$arch"
	files+=("$binary-$os-$arch")
	binaries+=("$binary-$os-$arch")
done
if [ "$binary" = cabundle-syncer ]; then
	krew_plugin
fi

# The SBOMs list the modules and the Go toolchain each binary was built
# from, read back from the binary's build information, so that they describe
# exactly what ships. -noserial and -notimestamp keep them reproducible.
for f in "${binaries[@]}"; do
	"$cyclonedx" bin -json -std -noserial -notimestamp -version "$version" -output "$out/$f.cdx.json" "$out/$f"
	files+=("$f.cdx.json")
done
# The image's SBOMs: what ships is the image, on each linux platform.
images=()
if [ -n "$digest" ]; then
	for f in "${binaries[@]}"; do
		case $f in "$binary"-linux-*) ;; *) continue ;; esac
		sbom=$binary-image-linux-${f##*-}.cdx.json
		image_sbom "$out/$f.cdx.json" "linux/${f##*-}" "$out/$sbom"
		files+=("$sbom")
		images+=("$out/$sbom")
	done
fi

(cd "$out" && sha256sum "${files[@]}" >SHA256SUMS)
printf '# %s %s\n\n%s\n' "$binary" "$version" "$notes" >"$out/RELEASE_NOTES.md"

for f in "${binaries[@]}" SHA256SUMS; do
	sign_blob "$f"
done

# The image is signed by its digest, never by its tag, which can move; the
# signature and the attestations are stored beside it in its registry.
if [ -n "$digest" ]; then
	"$cosign" sign --yes --key "$key" --tlog-upload=false "$image@$digest"
	for f in "${images[@]}"; do
		"$cosign" attest --yes --key "$key" --tlog-upload=false --type cyclonedx --predicate "$f" "$image@$digest"
	done
fi

build=(docker buildx build --platform 'linux/amd64,linux/arm64' -f "$dockerfile" --build-arg "VERSION=$version" --build-arg "REVISION=$revision" -t "$ref" --push .)
if [ "${PUSH:-}" = 1 ]; then
	command -v docker >/dev/null 2>&1 || die "PUSH=1 needs the docker CLI and a Docker engine"
	"${build[@]}"
else
	echo "release: the image is built and pushed by (PUSH=1 runs it):"
	echo "  ${build[*]}"
fi

echo "release: wrote $out:"
ls -l "$out"
