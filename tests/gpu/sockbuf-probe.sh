#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# sockbuf-probe.sh — what the kernel's TCP sockets hold while NCCL's Socket
# transport and our plugin run the same collective (GPU machine).  Two ranks
# time-slicing one GPU are bound by how much data can wait between them
# (NCCL's slots plus the sockets' buffers): this shows, per configuration, how
# many TCP connections queued data and the most bytes each held unsent
# (tx_queue) and unread (rx_queue), sampled from /proc/net/tcp{,6} every
# 0.1 s (that machine has no ss).
#
#   OP=broadcast SIZE=1G bash tests/gpu/sockbuf-probe.sh [NAME:VAR=VALUE[,VAR=VALUE...] ...]
#
# "socket" (NCCL's own) and "plugin" (defaults) always run; each argument adds
# a plugin configuration as in bw-knobs.sh.  Output: a table on stdout.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/sockbuf
mkdir -p "$W"
. tests/gpu/build.sh env
[ -x build/gpu/nccl_check ] || bash tests/gpu/build.sh > "$W/build.log" 2>&1 || {
    tail -20 "$W/build.log"
    exit 1
}
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=${NCCL_DEBUG_SUBSYS:-INIT,NET}
unset NCCL_NET NCCL_NET_PLUGIN GDRTRACE_DISABLE
for k in net.ipv4.tcp_rmem net.ipv4.tcp_wmem net.core.rmem_max net.core.wmem_max \
    net.ipv4.tcp_moderate_rcvbuf net.ipv4.tcp_adv_win_scale; do
    echo "$k = $(sysctl -n "$k" 2> /dev/null | tr '\t' ' ')"
done
cfgs=("socket:NCCL_NET_PLUGIN=none,NCCL_NET=Socket" "plugin:GDRTRACE_SOCKET_SNDBUF=0" "$@")
for c in "${cfgs[@]}"; do
    name=${c%%:*}
    vars=${c#*:}
    [ "$name" = socket ] || vars="NCCL_NET_PLUGIN=$PLUGIN,GDRTRACE_DIR=$W/rec-$name,$vars"
    mkdir -p "$W/rec-$name"
    : > "$W/ss-$name.txt"
    # shellcheck disable=SC2046
    env $(tr ',' ' ' <<< "$vars") NCCL_DEBUG_FILE="$W/nccl-$name.%h.%p.log" timeout 300 \
        build/gpu/nccl_check -b "${SIZE:-1G}" -e "${SIZE:-1G}" -o "${OP:-broadcast}" \
        > "$W/run-$name.txt" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2> /dev/null; do
        cat /proc/net/tcp /proc/net/tcp6 >> "$W/ss-$name.txt" 2> /dev/null
        echo "--" >> "$W/ss-$name.txt"
        sleep 0.1
    done
    wait "$pid"
    echo "$name: exit $? $(grep -h '^RESULT' "$W/run-$name.txt" | grep -o 'busbw_GBps=[^ ]*' | tr '\n' ' ')"
    grep -h "NET/Socket\|NET/gdrtrace : sock: connected" "$W"/nccl-"$name".*.log 2> /dev/null |
        sed 's/^.*NCCL INFO //' | sort | uniq -c | head -8
done
python3 - "$W" "${cfgs[@]}" <<'PY'
import sys
w, names = sys.argv[1], [c.split(":", 1)[0] for c in sys.argv[2:]]
mib = lambda x: f"{x / (1 << 20):.2f}"
print("\n| config | connections that queued > 1 MiB | max unsent (MiB) | max unread (MiB) | sum of each one's max unsent + unread (MiB) |")
print("|---|---:|---:|---:|---:|")
for n in names:
    peak = {}
    for line in open(f"{w}/ss-{n}.txt", errors="replace"):
        f = line.split()
        if len(f) < 5 or f[3] != "01" or ":" not in f[4]:
            continue  # header, separator or not ESTABLISHED
        tx, rx = (int(x, 16) for x in f[4].split(":"))
        p = peak.setdefault((f[1], f[2]), [0, 0])
        p[0], p[1] = max(p[0], tx), max(p[1], rx)
    busy = [v for v in peak.values() if max(v) > (1 << 20)]
    if not busy:
        print(f"| {n} | 0 | - | - | - |")
        continue
    print(f"| {n} | {len(busy)} | {mib(max(v[0] for v in busy))} | {mib(max(v[1] for v in busy))} | "
          f"{mib(sum(v[0] + v[1] for v in busy))} |")
PY
