#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-deb.sh — the Debian package (`make deb`, debian/) as a site deploys
# it: built with dpkg-buildpackage, lintian without error, installed with
# dpkg -i, then a job through it BY NAME (NCCL_NET_PLUGIN=gdrtrace, no
# LD_LIBRARY_PATH, no hand-run ldconfig: the NCCL-like harness looks the
# name up as NCCL does) whose recorders the installed `gdrtrace verdict`
# judges; the man pages and the completion where man and bash look; the
# export timer installed but not enabled; then
# removed and purged (also in a trap, so the machine is left as it was).
# dpkg refuses at once while another package tool (apt, unattended-upgrades,
# another test) holds its lock: every dpkg that changes the system here
# waits for the lock instead, as apt-get -o DPkg::Lock::Timeout=N does, up
# to DPKG_LOCK_TIMEOUT seconds (default 600), and says that it waits.
# Skips (77) when not root, without dpkg-buildpackage/debhelper
# (scripts/install-deps.sh deb installs them; make check does), or when a
# gdrtrace package is installed already (it is not ours to remove).
set -u
BUILD=${BUILD:-build/default}
so=libnccl-net-gdrtrace.so
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
for t in dpkg-buildpackage dh; do
    command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/install-deps.sh deb)"; exit 77; }
done
if dpkg-query -W -f='${Status}' gdrtrace 2>/dev/null | grep -q 'installed'; then
    echo "SKIP: a gdrtrace package is installed already; left alone"
    exit 77
fi
harness=$BUILD/harness/harness
[ -x "$harness" ] || { echo "FAIL: $harness not built (make tests)"; exit 1; }
tmp=$(mktemp -d) || exit 1
# dpkg_wait LOG ARGS...: dpkg ARGS, its output in LOG; while dpkg says its
# lock is held by another process, tries again each second, up to
# DPKG_LOCK_TIMEOUT tries.  Returns dpkg's exit status.
dpkg_wait() {
    local log=$1 tries=0 rc
    shift
    while :; do
        dpkg "$@" >"$log" 2>&1
        rc=$?
        [ $rc -ne 0 ] && grep -qE 'lock(ed)? .*by another process|is locked by another' "$log" &&
            [ $tries -lt "${DPKG_LOCK_TIMEOUT:-600}" ] || return $rc
        [ $tries -eq 0 ] && echo "note: dpkg $1: $(grep -m1 -i lock "$log"); waiting for it"
        tries=$((tries + 1))
        sleep 1
    done
}
installed=""
cleanup() {
    [ -n "$installed" ] && dpkg_wait "$tmp/purge.log" --purge gdrtrace
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

dist/build-deb.sh >"$tmp/deb.log" 2>&1 || { tail -n 30 "$tmp/deb.log"; echo "FAIL: make deb"; exit 1; }
deb=$(tail -n 1 "$tmp/deb.log")
[ -f "$deb" ] || { cat "$tmp/deb.log"; echo "FAIL: make deb named no package"; exit 1; }
installed=1
dpkg_wait "$tmp/dpkg.log" -i "$deb" || { cat "$tmp/dpkg.log"; bad "dpkg -i $deb"; }
lib=$(dpkg -L gdrtrace | grep "/$so\$" | grep -v /nccl-net-gdrtrace/)
[ -f "$lib" ] || bad "the package installs no $so"
[ "$(command -v gdrtrace)" = /usr/bin/gdrtrace ] || bad "gdrtrace is not /usr/bin/gdrtrace: $(command -v gdrtrace)"
# (Debian merges /lib into /usr/lib: compare the files, not the names.)
same() { [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]; }
cached=$(ldconfig -p | sed -n "s|^\t$so .*=> ||p" | head -n 1)
[ -n "$cached" ] && same "$cached" "$lib" || bad "the ldconfig trigger did not put $lib in the linker cache ($cached)"
dpkg -L gdrtrace | grep -E '/lib/.*/gdrtrace$' && bad "an entry named gdrtrace in a library folder (NCCL's bare-name lookup)"

# A job by name, from an empty folder, as the harness drives the plugin.
mkdir -p "$tmp/rec"
(cd "$tmp" && env -u LD_LIBRARY_PATH -u BUILD NCCL_NET_PLUGIN=gdrtrace \
    "$OLDPWD/$harness" --abi 11 --data-only --iters 6 --max-size 1M --dir "$tmp/rec") >"$tmp/h.log" 2>&1 ||
    { tail -n 15 "$tmp/h.log"; bad "harness through the installed plugin, by name"; }
loaded=$(sed -n "s/.*NCCL_NET_PLUGIN: dlopen(\"$so\") loaded //p" "$tmp/h.log" | head -n 1)
[ -n "$loaded" ] && same "$loaded" "$lib" ||
    bad "the harness did not load $lib by name: $(grep 'NCCL_NET_PLUGIN:' "$tmp/h.log" | head -n 1)"
(cd "$tmp" && gdrtrace verdict rec) >"$tmp/v.log" 2>&1
rc=$?
[ $rc -eq 11 ] || bad "installed gdrtrace verdict: exit $rc, expected 11 (HOST-STAGED over TCP): $(cat "$tmp/v.log")"
grep -q "HOST-STAGED" "$tmp/v.log" || bad "verdict does not say HOST-STAGED"
[ "$(man -w gdrtrace-verdict 2>/dev/null)" = /usr/share/man/man1/gdrtrace-verdict.1.gz ] ||
    bad "man does not find gdrtrace-verdict(1): $(man -w gdrtrace-verdict 2>&1)"
[ -f /usr/share/bash-completion/completions/gdrtrace ] || bad "no bash completion installed"
# gdrtrace-export.{service,timer}: shipped for the installed command, left disabled
svc=$(dpkg -L gdrtrace | grep '/systemd/system/gdrtrace-export.service$')
[ -n "$svc" ] && grep -q '^ExecStart=/usr/bin/gdrtrace export ' "$svc" &&
    dpkg -L gdrtrace | grep -q '/systemd/system/gdrtrace-export.timer$' ||
    bad "no gdrtrace-export.service/.timer for /usr/bin/gdrtrace: $(dpkg -L gdrtrace | grep systemd)"
[ -e /etc/systemd/system/timers.target.wants/gdrtrace-export.timer ] &&
    bad "the package enabled gdrtrace-export.timer (the site turns it on)"

dpkg_wait "$tmp/dpkg.log" -r gdrtrace || { cat "$tmp/dpkg.log"; bad "dpkg -r gdrtrace"; }
[ ! -e "$lib" ] && [ ! -e /usr/bin/gdrtrace ] || bad "dpkg -r left the plugin or the command"
ldconfig -p | grep -q "$so " && bad "the linker cache still lists $so after removal"
dpkg_wait "$tmp/dpkg.log" --purge gdrtrace || { cat "$tmp/dpkg.log"; bad "dpkg --purge gdrtrace"; }
dpkg-query -W gdrtrace >/dev/null 2>&1 && bad "dpkg still knows gdrtrace after purge"
installed=""
[ $fail -eq 0 ] && echo "PASS: $deb builds, lints, installs, runs a job by name, purges"
exit $fail
