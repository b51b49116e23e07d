#!/usr/bin/env bash
# Installs what the real node of `make e2e` needs from Debian's packages
# (test/realnode): containerd, runc, the CNI plugins and the network tools.
# It stops with a message where the node cannot run: not Linux, not root, or
# no apt-get. Elsewhere, run the same suite on kind: make e2e-kind.
set -euo pipefail

fail() {
	echo "node-prerequisites: $*; the real node cannot run here. Run the same suite on kind instead: make e2e-kind" >&2
	exit 1
}

[ "$(uname -s)" = Linux ] || fail "this is $(uname -s), not Linux"
[ "$(id -u)" = 0 ] || fail "not root: containerd, the kubelet and kube-proxy change the host's network and cgroups (sudo -E make e2e)"

# Debian package -> a command or file that shows it is installed.
declare -A packages=(
	[containerd]=containerd [runc]=runc [containernetworking-plugins]=/usr/lib/cni/bridge
	[iptables]=iptables [nftables]=nft [conntrack]=conntrack [iproute2]=ip
)
missing=()
for pkg in "${!packages[@]}"; do
	command -v "${packages[$pkg]}" >/dev/null 2>&1 || [ -x "${packages[$pkg]}" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || fail "missing ${missing[*]} and no apt-get to install them"
echo ">> installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
