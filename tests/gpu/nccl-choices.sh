#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# nccl-choices.sh — what NCCL itself chose (graph, channels, algorithm and
# protocol per launch) with NCCL's Socket and with our plugin, for the same
# ops and sizes, so a bandwidth gap can be told apart from a different plan.
# GPU machine; run after tests/gpu/build.sh.
#
#   OPS=broadcast,sendrecv SIZE=128M bash tests/gpu/nccl-choices.sh
#
# Writes $OUT/choices/{socket,plugin}/nccl.*.log and prints, per config, the
# channel count and the distinct "Algo/proto" lines NCCL logged.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}/choices
. tests/gpu/build.sh env
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0
unset NCCL_NET NCCL_NET_PLUGIN GDRTRACE_DISABLE
for cfg in socket plugin; do
    d=$OUTDIR/$cfg
    mkdir -p "$d/rec"
    if [ "$cfg" = socket ]; then vars=(NCCL_NET_PLUGIN=none NCCL_NET=Socket)
    else vars=(NCCL_NET_PLUGIN="$PLUGIN" GDRTRACE_DIR="$d/rec"); fi
    env "${vars[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,NET \
        NCCL_DEBUG_FILE="$d/nccl.%h.%p.log" timeout 300 build/gpu/nccl_check \
        -b "${SIZE:-128M}" -e "${SIZE:-128M}" -o "${OPS:-broadcast,sendrecv}" > "$d/out.txt" 2>&1
    echo "== $cfg: exit $?"
    grep -h "^RESULT" "$d/out.txt"
    for f in "$d"/nccl.*.log; do
        echo "-- $(basename "$f")"
        grep -hoE "[0-9]+ coll channels, [0-9]+ collnet channels, [0-9]+ nvls channels, [0-9]+ p2p channels, [0-9]+ p2p channels per peer" "$f" | sort -u
        grep -hE "Pattern|nChannels|Tuning|Algo|algorithm|proto" "$f" | sed -E 's/^[^ ]+ [^ ]+ //' | sort | uniq -c | sort -rn | head -12
    done
done
