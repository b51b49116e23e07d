#!/usr/bin/env bash
# Installs a tool of make's that is not a Go module from Debian's packages,
# at the version the Makefile pins:
#
#   hack/build/debian-package.sh <package> <version>
#
# Where the package is installed at that version it does nothing, and needs
# neither root nor apt-get. Elsewhere it installs that version with apt-get,
# as root; a newer version installed is not downgraded. It stops with a
# message where it cannot install, or where Debian no longer serves that
# version (`apt-cache policy <package>` lists the versions it serves; the
# Makefile's pin moves with them).
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 <package> <version>" >&2
	exit 2
fi
pkg=$1 version=$2

fail() {
	echo "debian-package: $pkg $version: $*" >&2
	exit 1
}

installed=$(dpkg-query -W -f '${db:Status-Status} ${Version}' "$pkg" 2>/dev/null || true)
[ "$installed" = "installed $version" ] && exit 0
case $installed in
"installed "*) have="${installed#installed } is installed" ;;
*) have="not installed" ;;
esac
command -v apt-get >/dev/null 2>&1 || fail "$have, and there is no apt-get to install it"
[ "$(id -u)" = 0 ] || fail "$have; install it as root: apt-get install $pkg=$version"
echo ">> installing $pkg $version with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The lock timeout waits for another apt-get, such as the real node's
# (hack/e2e/node-prerequisites.sh), rather than failing at once.
apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "$pkg=$version" >/dev/null ||
	fail "apt-get cannot install it ($have); apt-cache policy $pkg lists the versions Debian serves"
