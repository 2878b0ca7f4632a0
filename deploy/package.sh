#!/usr/bin/env bash
# Builds the Debian package of pgwaitprof: deploy/build.sh of the program, its man pages and its
# bash completion only (not the tests; nothing to do when they are up to date), then CPack's DEB generator on that build tree (deploy/package.cmake): the binary is
# packaged as built, stripped, with no second compile. Prints the path of the .deb, which is
# BUILD_DIR/package/pgwaitprof_VERSION_ARCH.deb (BUILD_DIR defaults to ./build). Extra arguments
# go to the build's configure step, as for deploy/build.sh.
#   sudo apt-get install ./build/package/pgwaitprof_*.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

for tool in help2man dpkg-shlibdeps fakeroot; do
  command -v "$tool" >/dev/null ||
    { echo "package.sh: \"$tool\" is not installed (run deploy/install-deps.sh)" >&2; exit 1; }
done
BUILD_DIR=$build BUILD_TARGET=pgwaitprof_package_files \
  "$root/deploy/build.sh" "$@" >&2
rm -f "$build"/package/pgwaitprof_*.deb
# CPack's own staging area: a file removed from the install rules must not linger in it.
rm -rf "$build/_CPack_Packages"
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/package/pgwaitprof_*.deb)
echo "$deb"
