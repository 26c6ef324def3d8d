#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# conform-sock.sh — NCCL's call patterns (gdrtrace-conform) against the built
# plugin: its sock transport over loopback, then its inner transport wrapping
# the stand-in third-party plugin (tests/inner/fake_inner.c, itself sock)
# through that plugin's v11 table.  Every pattern passes or says why the
# plugin cannot be asked it (maxRecvs 1: no grouped receives, no shared
# comms).  Recorders go to a scratch folder.
set -u
BUILD=${BUILD:-build/default}
bin="$BUILD/gdrtrace-conform" plugin="$BUILD/libnccl-net-gdrtrace.so"
fake="$BUILD/tests/libnccl-net-fakeinner.so"
for f in "$bin" "$plugin" "$fake"; do
    [ -e "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrtrace-conform.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export GDRTRACE_DIR="$tmp" GDRTRACE_SOCKET_IFNAME=lo
fail=0

run() { # NAME, then env assignments and arguments for the driver
    local name=$1 log="$tmp/$1.log"
    shift
    if env "$@" >"$log" 2>&1; then
        echo "ok: $name: $(tail -n 1 "$log")"
    else
        echo "FAIL: $name"
        grep -E '^(FAIL|SKIP|PASS)|FAIL:|WARN' "$log" | head -n 40
        fail=1
    fi
}

run sock GDRTRACE_TRANSPORT=sock "$bin" -v "$plugin"
# The patterns name the plugin's maxRecvs reason when they skip.
grep -q '^SKIP shared-senders' "$tmp/sock.log" ||
    { echo "FAIL: sock (maxRecvs 1) ran shared-senders"; fail=1; }
run inner GDRTRACE_TRANSPORT=inner GDRTRACE_INNER="$fake" GDRTRACE_INNER_VERSION=11 \
    "$bin" --abi 10 "$plugin"
# The third-party plugin alone, as its authors would run the suite.
run fake-alone "$bin" "$fake"
# The driver's own errors: a library that is no plugin, an unknown pattern.
if "$bin" /nonexistent/libnccl-net-x.so >"$tmp/bad.log" 2>&1; then
    echo "FAIL: a missing library passed"; fail=1
elif [ $? -ne 2 ] || ! grep -q "cannot load /nonexistent/libnccl-net-x.so" "$tmp/bad.log"; then
    echo "FAIL: a missing library: exit 2 and its name expected"; cat "$tmp/bad.log"; fail=1
else
    echo "ok: a missing library is refused with its name (exit 2)"
fi
"$bin" --pattern nosuch "$plugin" >"$tmp/nosuch.log" 2>&1
if [ $? -ne 2 ] || ! grep -q "no pattern named 'nosuch'" "$tmp/nosuch.log"; then
    echo "FAIL: an unknown pattern: exit 2 and its name expected"; cat "$tmp/nosuch.log"; fail=1
else
    echo "ok: an unknown pattern is refused with its name (exit 2)"
fi
exit $fail
