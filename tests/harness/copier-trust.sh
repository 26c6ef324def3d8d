#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# copier-trust.sh — the plugin starts only a trusted copier, and the file it
# starts is the file it checked (CWE-426, CWE-367, docs/security.md).  Needs
# root (to be `nobody` too): skipped otherwise.  Cases:
#  planted   a copy of the plugin in a world-writable tree W/plug/ (W mode
#            1777), and `nobody` puts W/libexec/gdrtrace/gdrtrace-gpumem-copier
#            there (a script that records `id`): not started, one WARN names
#            it (found through ../libexec/gdrtrace from the plugin's folder).
#  trusted   the same layout owned by root under the sticky /tmp: started.
#  link      `nobody`'s link L/libexec -> a root-owned tree in a sticky L:
#            refused, the WARN names the link and its owner.
#  flip      `nobody` flips that link between the root-owned tree and its own
#            tree holding a spy copier (records that it ran) while the copier
#            is found and started 4000 times (copier_race: found beside the
#            program's file, and through GDRTRACE_GPUMEM_COPIER): the spy
#            never runs.
#  checked   root's own link, flipped by root between the two trees: until
#            50 copiers started (4000 rounds at most), each start runs the
#            file its walk checked, never the spy (the name is never resolved
#            a second time).
set -u
BUILD=${BUILD:-build/default}
prog=$BUILD/tests/test_gpumem_copier_so
race=$BUILD/tests/copier_race
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root, to plant a file as nobody"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }
[ -x "$prog" ] && [ -x "$race" ] || { echo "FAIL: $prog and $race not built (make tests)"; exit 1; }
base=$(mktemp -d) || exit 1
flipper=
cleanup() {
    [ -n "$flipper" ] && kill "$flipper" 2>/dev/null
    rm -rf "$base"
}
trap cleanup EXIT
chmod 0755 "$base"
export GDRTRACE_DIR=$base/rec GT_SPY_LOG=$base/spy.log
export GDRTRACE_CUDA_LIB=$(readlink -f "$BUILD/tests/libfakecuda.so")
mkdir "$GDRTRACE_DIR"
# Under ASan, LeakSanitizer's check at each exit of the copier and its
# intermediate costs ~0.4 s a start; test_gpumem_copier checks their leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
W=$base/W
mkdir -p "$W/plug"
chmod 1777 "$W"
cp "$BUILD/libnccl-net-gdrtrace.so" "$W/plug/"
real=$(readlink -f "$BUILD/gdrtrace-gpumem-copier")
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_nobody mkdir -p "$W/libexec/gdrtrace" || { echo "FAIL: nobody cannot write into $W"; exit 1; }
planted=$W/libexec/gdrtrace/gdrtrace-gpumem-copier
as_nobody sh -c "printf '#!/bin/sh\nid >>$W/ran\nexec $real \"\$@\"\n' >'$planted' && chmod 0755 '$planted'" ||
    { echo "FAIL: nobody could not plant $planted"; exit 1; }
fail=0
timeout 60 "$prog" "$W/plug/libnccl-net-gdrtrace.so" "$W/plug/../libexec/gdrtrace/gdrtrace-gpumem-copier" "$W/libexec is owned by nobody (uid 65534)" >"$base/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: planted: $prog (exit $rc): $(cat "$base/out")"; fail=1; }
if [ -e "$W/ran" ]; then
    echo "FAIL: the copier nobody planted ran: $(cat "$W/ran")"
    fail=1
fi
# The same layout owned by root (the job's uid here) under the sticky /tmp:
# trusted, started (a sticky folder above does not make a path untrusted).
R=$base/R
mkdir -p "$R/plug" "$R/libexec/gdrtrace"
chmod 0755 "$R" "$R/plug" "$R/libexec" "$R/libexec/gdrtrace"
cp "$BUILD/libnccl-net-gdrtrace.so" "$R/plug/"
cp "$real" "$R/libexec/gdrtrace/gdrtrace-gpumem-copier"
timeout 60 "$prog" "$R/plug/libnccl-net-gdrtrace.so" "+$R/plug/../libexec/gdrtrace/gdrtrace-gpumem-copier" >"$base/out2" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: trusted: a trusted copier beside a plugin copy was not started (exit $rc): $(tail -n 5 "$base/out2")"; fail=1; }

# link: nobody's link L/libexec -> R/libexec (root's tree) in a sticky L.
L=$base/L
mkdir -p "$L/plug"
chmod 1777 "$L"
cp "$BUILD/libnccl-net-gdrtrace.so" "$race" "$L/plug/"
as_nobody sh -c "mkdir -p '$L/n/gdrtrace' && cp '$race' '$L/n/gdrtrace/gdrtrace-gpumem-copier' &&
    chmod 0755 '$L/n' '$L/n/gdrtrace' '$L/n/gdrtrace/gdrtrace-gpumem-copier' &&
    ln -s '$R/libexec' '$L/libexec'" || { echo "FAIL: nobody could not make its tree and link in $L"; exit 1; }
linkwhy="$L/libexec is a symbolic link owned by nobody (uid 65534)"
timeout 60 "$prog" "$L/plug/libnccl-net-gdrtrace.so" "$L/plug/../libexec/gdrtrace/gdrtrace-gpumem-copier" "$linkwhy" >"$base/out3" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: link: the copier through nobody's link (exit $rc): $(tail -n 5 "$base/out3")"; fail=1; }

# flip_during LINK WHO CMD...: runs CMD (copier_race run N) while WHO
# ("nobody" or "root") flips LINK between R/libexec and L/n; the flipper has
# flipped before CMD starts and is stopped after.  CMD's output in $base/run.
flip_during() {
    local link=$1 who=$2 flipbin=$race
    shift 2
    rm -f "$base/stop" "$base/flips"
    if [ "$who" = nobody ]; then
        flipbin=$L/n/gdrtrace/gdrtrace-gpumem-copier
        as_nobody "$flipbin" flip "$link" "$R/libexec" "$L/n" "$base/stop" >"$base/flips" 2>&1 &
    else
        "$flipbin" flip "$link" "$R/libexec" "$L/n" "$base/stop" >"$base/flips" 2>&1 &
    fi
    flipper=$!
    # it has flipped once the link was renamed over: wait for a new target
    local first=$(readlink "$link") i=0
    while [ "$(readlink "$link")" = "$first" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
    timeout 120 "$@" >"$base/run" 2>&1
    local rc=$?
    touch "$base/stop"
    wait "$flipper"
    flipper=
    echo "$(head -n 1 "$base/run"); $(cat "$base/flips")"
    return $rc
}
rounds=4000
# flip: nobody's link, found beside the program's file (L/plug/copier_race)
: >"$GT_SPY_LOG"
out=$(flip_during "$L/libexec" nobody "$L/plug/copier_race" run $rounds) ||
    { echo "FAIL: flip (plugin's folder): copier_race: $(cat "$base/run")"; fail=1; }
echo "flip, plugin's folder: $out; spy ran $(grep -c . "$GT_SPY_LOG") times"
[ -s "$GT_SPY_LOG" ] && { echo "FAIL: flip (plugin's folder): nobody's program ran as root: $(sort "$GT_SPY_LOG" | uniq -c)"; fail=1; }
grep -q "^rounds $rounds started 0 refused $rounds" "$base/run" && grep -qF "not trusted: $linkwhy" "$base/run" ||
    { echo "FAIL: flip (plugin's folder): not every start refused naming the link: $(cat "$base/run")"; fail=1; }
# the same through GDRTRACE_GPUMEM_COPIER
: >"$GT_SPY_LOG"
out=$(GDRTRACE_GPUMEM_COPIER=$L/libexec/gdrtrace/gdrtrace-gpumem-copier flip_during "$L/libexec" nobody "$race" run $rounds) ||
    { echo "FAIL: flip (GDRTRACE_GPUMEM_COPIER): copier_race: $(cat "$base/run")"; fail=1; }
echo "flip, GDRTRACE_GPUMEM_COPIER: $out; spy ran $(grep -c . "$GT_SPY_LOG") times"
[ -s "$GT_SPY_LOG" ] && { echo "FAIL: flip (GDRTRACE_GPUMEM_COPIER): nobody's program ran as root: $(sort "$GT_SPY_LOG" | uniq -c)"; fail=1; }
grep -q "^rounds $rounds started 0 refused $rounds" "$base/run" &&
    grep -qF "GDRTRACE_GPUMEM_COPIER=$L/libexec/gdrtrace/gdrtrace-gpumem-copier is not trusted: $linkwhy" "$base/run" ||
    { echo "FAIL: flip (GDRTRACE_GPUMEM_COPIER): not every start refused naming the link: $(cat "$base/run")"; fail=1; }

# checked: root's own link K/libexec in a sticky K, flipped by root: a start
# runs what its walk checked (R's copier) or is refused (nobody's tree).
K=$base/K
mkdir -p "$K/plug"
chmod 1777 "$K"
cp "$race" "$K/plug/"
ln -s "$R/libexec" "$K/libexec"
: >"$GT_SPY_LOG"
out=$(flip_during "$K/libexec" root "$K/plug/copier_race" run $rounds 50) ||
    { echo "FAIL: checked: copier_race: $(cat "$base/run")"; fail=1; }
echo "checked, root's link: $out; spy ran $(grep -c . "$GT_SPY_LOG") times"
[ -s "$GT_SPY_LOG" ] && { echo "FAIL: checked: a file other than the one checked ran: nobody's spy, $(sort "$GT_SPY_LOG" | uniq -c)"; fail=1; }
started=$(sed -n 's/^rounds [0-9]* started \([0-9]*\) .*/\1/p' "$base/run")
[ "${started:-0}" -gt 0 ] || { echo "FAIL: checked: root's trusted copier never started: $(cat "$base/run")"; fail=1; }

[ $fail -eq 0 ] && echo "PASS: a copier planted or reached through another user's link is not started, nor is a file other than the one checked; a trusted one is"
exit $fail
