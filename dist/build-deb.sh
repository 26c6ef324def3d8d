#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-deb.sh — `make deb`: builds the Debian package with dpkg-buildpackage
# from a copy of the source tree (tracked and new files, not build outputs;
# outside git: everything but build/),
# since dpkg-buildpackage writes beside the tree, then runs lintian on it
# (fails on an error).  Output: build/deb/gdrtrace_<version>_<arch>.deb; the
# last line printed is its path.
set -euo pipefail
cd "$(dirname "$0")/.."
for t in dpkg-buildpackage dh; do
    command -v $t >/dev/null || {
        echo "make deb: $t not found; run: scripts/install-deps.sh deb" >&2
        exit 1
    }
done
ver=$(dpkg-parsechangelog -S Version)
mk=$(sed -n 's/^VERSION := //p' Makefile)
[ "$ver" = "$mk" ] || {
    echo "make deb: debian/changelog says $ver, the Makefile's VERSION $mk: make them agree" >&2
    exit 1
}
out=build/deb
src=$out/gdrtrace-$ver
rm -rf "$out"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null
else # an unpacked source archive: everything but the build outputs
    tar --exclude=./build -cf - .
fi | tar -xf - -C "$src"
log=$out/build.log
echo "building $out/gdrtrace_${ver}_$(dpkg --print-architecture).deb (log: $log)"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" dpkg-buildpackage -b -us -uc) >"$log" 2>&1 || {
    tail -n 30 "$log"
    echo "make deb: dpkg-buildpackage failed; log: $log" >&2
    exit 1
}
deb=$(ls "$out"/gdrtrace_"$ver"_*.deb)
if command -v lintian >/dev/null; then
    lintian --fail-on error "$deb" 2>/dev/null | tee "$out/lintian.txt" || {
        echo "make deb: lintian reports an error (above; $out/lintian.txt)" >&2
        exit 1
    }
else
    echo "note: lintian not installed (scripts/install-deps.sh deb): not checked"
fi
echo "$deb"
