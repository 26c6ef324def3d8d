#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# copier-trust.sh — the plugin starts only a trusted copier (CWE-426,
# docs/security.md): a copy of the plugin in a world-writable tree W/plug/
# (W mode 1777), and `nobody` puts W/libexec/gdrtrace/gdrtrace-gpumem-copier
# there, a script that records `id` and execs the real copier.  The plugin
# must not start it (it found it through ../libexec/gdrtrace from its own
# folder): one WARN names it, the script never runs.  Needs root (to be
# `nobody` too): skipped otherwise.
set -u
BUILD=${BUILD:-build/default}
prog=$BUILD/tests/test_gpumem_copier_so
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root, to plant a file as nobody"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }
[ -x "$prog" ] || { echo "FAIL: $prog not built (make tests)"; exit 1; }
base=$(mktemp -d) || exit 1
trap 'rm -rf "$base"' EXIT
chmod 0755 "$base"
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
timeout 60 "$prog" "$W/plug/libnccl-net-gdrtrace.so" "$planted" >"$base/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: $prog (exit $rc): $(tail -n 5 "$base/out")"; fail=1; }
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
[ $rc -eq 0 ] || { echo "FAIL: a trusted copier beside a plugin copy was not started (exit $rc): $(tail -n 5 "$base/out2")"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: a copier planted beside a plugin copy in a world-writable tree is not started; a trusted one is"
exit $fail
