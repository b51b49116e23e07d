#!/usr/bin/env bash
# Runs the end-to-end suite of test/e2e against a kind cluster:
#
#   make e2e-kind
#
# It builds both images, creates the kind cluster of
# test/e2e/kind/kind-config.yaml (one Kyma node, two customer nodes), loads
# the images into its nodes, installs the neighbours (the CRDs and Gardener
# cert-management, test/e2e/neighbours), applies deploy/ through the overlay
# test/e2e/overlay, and runs the same suite as `make e2e` with
# SNATCH_TEST_KUBECONFIG pointing at the cluster.
#
# Needs a Docker engine. kind is built from its Go module into bin/ unless
# KIND names one. KEEP_CLUSTER=1 keeps the cluster afterwards; otherwise it
# is deleted, also when the suite fails.
set -euo pipefail

cd "$(dirname "$0")/../.."
root=$PWD

kind_version=${KIND_VERSION:-v0.33.0}
cluster=${KIND_CLUSTER:-kim-snatch-e2e}
kubectl=${KUBECTL:-kubectl}
tag=e2e

fail() {
	echo "e2e-kind: $*" >&2
	exit 1
}

# Fail fast, before any build, where the suite cannot run.
command -v docker >/dev/null 2>&1 ||
	fail "the docker CLI is not installed; kind needs a Docker engine. Without one, run the same suite locally: make e2e"
docker info >/dev/null 2>&1 ||
	fail "no Docker engine is reachable ('docker info' failed); kind needs one. Start it or set DOCKER_HOST, or run the same suite locally: make e2e"
command -v "$kubectl" >/dev/null 2>&1 || fail "kubectl not found at '$kubectl'; run through 'make e2e-kind', which builds it"

kind=${KIND:-$root/bin/kind-$kind_version}
if [ ! -x "$kind" ]; then
	echo ">> building kind $kind_version into $kind"
	GOBIN=$(mktemp -d) && export GOBIN
	go install "sigs.k8s.io/kind@$kind_version"
	mkdir -p "$(dirname "$kind")" && mv "$GOBIN/kind" "$kind"
fi

echo ">> building the images snatch-webhook:$tag and cabundle-syncer:$tag"
VERSION=${WEBHOOK_VERSION:-dev} IMG_WEBHOOK=snatch-webhook:$tag hack/build/docker-build.sh webhook
VERSION=${SYNCER_VERSION:-dev} IMG_SYNCER=cabundle-syncer:$tag hack/build/docker-build.sh syncer

kubeconfig=$root/bin/kind-$cluster.kubeconfig
if ! "$kind" get clusters 2>/dev/null | grep -qx "$cluster"; then
	echo ">> creating kind cluster $cluster"
	"$kind" create cluster --name "$cluster" --config test/e2e/kind/kind-config.yaml --kubeconfig "$kubeconfig" --wait 3m
else
	"$kind" get kubeconfig --name "$cluster" >"$kubeconfig"
fi
if [ -z "${KEEP_CLUSTER:-}" ]; then
	trap '"$kind" delete cluster --name "$cluster" >/dev/null 2>&1 || true' EXIT
fi

echo ">> loading the images into the nodes"
"$kind" load docker-image --name "$cluster" "snatch-webhook:$tag" "cabundle-syncer:$tag"
# Gardener cert-management's image, which make e2e-kind writes first
# (make images, without Docker).
"$kind" load image-archive --name "$cluster" bin/images/cert-controller-manager.tar

echo ">> installing the neighbours: the CRDs, Gardener cert-management"
"$kubectl" --kubeconfig "$kubeconfig" apply --server-side -f bin/neighbours/crds
"$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Established --timeout=1m -f bin/neighbours/crds
"$kubectl" --kubeconfig "$kubeconfig" apply --server-side -k test/e2e/neighbours/cert-management
"$kubectl" --kubeconfig "$kubeconfig" -n cert-management rollout status --timeout=3m deployment/cert-controller-manager

echo ">> applying deploy/ through test/e2e/overlay"
"$kubectl" --kubeconfig "$kubeconfig" apply --server-side -k test/e2e/overlay

echo ">> running the end-to-end suite against $cluster"
SNATCH_TEST_KUBECONFIG=$kubeconfig go test -count=1 -v -timeout 40m ./test/e2e
