#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_nccl_env.sh — the job's NCCL transport variables reach the built
# plugin and its recorder (issue 18), through the v11 harness (two processes,
# every byte checked), over sock on loopback:
#  - set only in a file named by NCCL_CONF_FILE (nothing in the environment),
#    NCCL_SOCKET_IFNAME=lo and NCCL_SOCKET_SNDBUF steer sock ("sock: using
#    [0]lo", the buffer size asked for), and each process's recorder keeps
#    them in its settings section with source "nccl" and the file named;
#  - a GDRTRACE_* twin overrides the NCCL value, source "gdrtrace";
#  - `gdrtrace diff` of the two runs names the transport setting that
#    differs (a confounder), not just the registration path.
set -u
BUILD=${BUILD:-build/default}
G="$BUILD/gdrtrace"
[ -x "$G" ] || { echo "FAIL: $G is not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gt-nccl-env.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
for v in $(env | grep -oE '^(NCCL|GDRTRACE)_SOCKET_[A-Z_]+'); do unset "$v"; done
unset NCCL_CONF_FILE
export GDRTRACE_TRANSPORT=sock HOME="$work"
printf '# a site file\nNCCL_SOCKET_IFNAME=lo\nNCCL_SOCKET_SNDBUF=65536\n' >"$work/nccl.conf"
fail=0

run() { # name: runs the harness with recorders in $work/name
    mkdir -p "$work/$1"
    GDRTRACE_DIR="$work/$1" HARNESS_ARGS="--data-only -v" \
        "$(dirname "$0")/run_harness.sh" 11 >"$work/$1.log" 2>&1
}
settings() { # dir: "KEY=VALUE [source] origin" lines of the first recorder
    "$G" summary --json "$1" | python3 -c '
import json, sys
for e in json.load(sys.stdin)["processes"][0]["settings"]:
    print("%s=%s [%s] %s" % (e["key"], e["value"], e["source"], e.get("origin", "")))'
}

if ! NCCL_CONF_FILE="$work/nccl.conf" run conf; then
    echo "FAIL: harness with NCCL_CONF_FILE: $(tail -5 "$work/conf.log")"
    exit 1
fi
s=$(settings "$work/conf")
if grep -q 'sock: using \[0\]lo:' "$work/conf.log" &&
    grep -q 'sock: using .*sndbuf 65536' "$work/conf.log" &&
    grep -qx "GDRTRACE_SOCKET_IFNAME=lo \[nccl\] NCCL_SOCKET_IFNAME=lo ($work/nccl.conf)" <<<"$s" &&
    grep -qx "GDRTRACE_SOCKET_SNDBUF=65536 \[nccl\] NCCL_SOCKET_SNDBUF=65536 ($work/nccl.conf)" <<<"$s"; then
    echo "PASS: NCCL_CONF_FILE's NCCL_SOCKET_IFNAME and _SNDBUF steer sock and are recorded as nccl"
else
    echo "FAIL: conf-file values: settings:"
    echo "$s"
    grep 'sock: using' "$work/conf.log" | head -3
    fail=1
fi

if ! NCCL_CONF_FILE="$work/nccl.conf" GDRTRACE_SOCKET_SNDBUF=131072 run twin; then
    echo "FAIL: harness with the twin: $(tail -5 "$work/twin.log")"
    exit 1
fi
s=$(settings "$work/twin")
if grep -q 'sock: using .*sndbuf 131072' "$work/twin.log" &&
    grep -qx "GDRTRACE_SOCKET_SNDBUF=131072 \[gdrtrace\] GDRTRACE_SOCKET_SNDBUF=131072" <<<"$s"; then
    echo "PASS: GDRTRACE_SOCKET_SNDBUF overrides NCCL_SOCKET_SNDBUF, recorded as gdrtrace"
else
    echo "FAIL: twin: settings:"
    echo "$s"
    fail=1
fi

out=$("$G" diff "$work/conf" "$work/twin" 2>&1)
if grep -q 'setting GDRTRACE_SOCKET_SNDBUF: A "65536" vs B "131072"' <<<"$out" &&
    ! grep -q 'setting GDRTRACE_SOCKET_IFNAME' <<<"$out"; then
    echo "PASS: diff names the socket buffer size as a confounder, not the equal interface"
else
    echo "FAIL: diff: $out"
    fail=1
fi
exit "$fail"
