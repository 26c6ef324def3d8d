#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# nccl-env.sh — the job's NCCL transport variables keep their meaning inside
# real NCCL (issue 18), on the GPU machine, after tests/gpu/build.sh:
#   conf   NCCL_SOCKET_IFNAME=lo and NCCL_SOCKET_SNDBUF set only in a file
#          named by NCCL_CONF_FILE: the plugin's sock transport uses lo with
#          that buffer size (its INFO line in NCCL's log), the recorder keeps
#          both with source nccl, data correct (nccl_check exit 0);
#   other  NCCL_SOCKET_IFNAME==IFACE (the first other up interface with an
#          IPv4 address) in the environment: sock uses IFACE instead;
#   twin   GDRTRACE_SOCKET_IFNAME=lo beats NCCL_SOCKET_IFNAME==IFACE.
# Two ranks share the GPU as two "hosts" (nccl_check sets NCCL_HOSTIDs), so
# NCCL connects them through the plugin.  Prints one PASS/FAIL line per case.
# Exit: 0 all passed, 1 a case failed, 77 nothing to run on (no nccl_check).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
. tests/gpu/build.sh env
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
G=$ROOT/build/default/gdrtrace
OUTDIR=${OUT:-$ROOT/build/gpu-out}/nccl-env
[ -x build/gpu/nccl_check ] || { echo "SKIP: build/gpu/nccl_check not built (tests/gpu/build.sh)"; exit 77; }
for v in $(env | grep -oE '^(NCCL_SOCKET|GDRTRACE_SOCKET|NCCL_NET)[A-Z_]*'); do unset "$v"; done
unset NCCL_CONF_FILE GDRTRACE_DISABLE
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 GDRTRACE_TRANSPORT=sock
# The first interface besides lo with an IPv4 address (no `ip` on that machine).
other=$(python3 -c '
import fcntl, socket, struct
for _, n in socket.if_nameindex():
    if n == "lo":
        continue
    try:
        fcntl.ioctl(socket.socket(), 0x8915, struct.pack("256s", n.encode()[:15]))  # SIOCGIFADDR
        print(n)
        break
    except OSError:
        pass' 2>/dev/null)
mkdir -p "$OUTDIR"
printf 'NCCL_SOCKET_IFNAME=lo\nNCCL_SOCKET_SNDBUF=1048576\n' > "$OUTDIR/nccl.conf"
fail=0

# one NAME ENV...: nccl_check through the plugin with ENV, logs under NAME.
one() {
    local d=$OUTDIR/$1
    shift
    rm -rf "$d"
    mkdir -p "$d/rec"
    env "$@" NCCL_NET_PLUGIN="$PLUGIN" GDRTRACE_DIR="$d/rec" NCCL_DEBUG=INFO \
        NCCL_DEBUG_SUBSYS=INIT,NET NCCL_DEBUG_FILE="$d/nccl.%h.%p.log" \
        timeout 150 build/gpu/nccl_check -b 1M -e 4M -f 4 -o all_reduce,sendrecv \
        > "$d/out.txt" 2>&1
    echo $? > "$d/rc"
}
settings() { # dir: KEY=VALUE [source] origin, first recorder
    "$G" summary --json "$1" | python3 -c '
import json, sys
for e in json.load(sys.stdin)["processes"][0]["settings"]:
    print("%s=%s [%s] %s" % (e["key"], e["value"], e["source"], e.get("origin", "")))'
}
check() { # name iface source
    local d=$OUTDIR/$1 rc s
    rc=$(cat "$d/rc")
    s=$(settings "$d/rec" 2>&1)
    if [ "$rc" = 0 ] && grep -qh "sock: using \[0\]$2:" "$d"/nccl.*.log &&
        ! grep -qh "sock: using .*\[1\]" "$d"/nccl.*.log &&
        grep -q "^GDRTRACE_SOCKET_IFNAME=[=]*$2 \[$3\]" <<< "$s"; then
        echo "PASS $1: NCCL ran through the plugin on $2 only (setting recorded as $3), data correct"
        grep -h "sock: using" "$d"/nccl.*.log | head -1
    else
        echo "FAIL $1: nccl_check exit $rc; plugin lines:"
        grep -h "sock: using\|NET/Plugin\|gdrtrace" "$d"/nccl.*.log 2>/dev/null | head -6
        echo "$s" | grep -i socket
        tail -3 "$d/out.txt"
        fail=1
    fi
}

one conf NCCL_CONF_FILE="$OUTDIR/nccl.conf"
check conf lo nccl
if grep -qh "sock: using .*sndbuf 1048576" "$OUTDIR/conf"/nccl.*.log &&
    settings "$OUTDIR/conf/rec" | grep -q '^GDRTRACE_SOCKET_SNDBUF=1048576 \[nccl\]'; then
    echo "PASS conf: NCCL_SOCKET_SNDBUF from the conf file reached sock and the recorder"
else
    echo "FAIL conf: NCCL_SOCKET_SNDBUF=1048576 not in force"
    fail=1
fi
if [ -n "$other" ]; then
    one other NCCL_SOCKET_IFNAME="=$other"
    check other "$other" nccl
    one twin NCCL_SOCKET_IFNAME="=$other" GDRTRACE_SOCKET_IFNAME=lo
    check twin lo gdrtrace
else
    echo "SKIP other, twin: no up interface with a global IPv4 address besides lo"
fi
exit "$fail"
