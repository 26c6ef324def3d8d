#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# nccl-logs.sh — capture real NCCL logs (NCCL_DEBUG=INFO, SUBSYS INIT,NET)
# with the recorders of the same runs, as fixtures for the NCCL-log join
# (`gdrtrace verdict --nccl-log`, issue 19).  CI never runs it; its output is
# copied into tests/reader/nccl-logs/ by hand (see the README there).
#
# Cases (two ranks on the one GPU as two "hosts"; nccl_check on the system's
# NCCL 2.28.3 with small sizes; pg_multi.py on PyTorch's NCCL 2.28.9):
#   c-plugin      our plugin by absolute path (sock, host-staged)
#   c-byname      NCCL_NET_PLUGIN=gdrtrace, the plugin found through LD_LIBRARY_PATH
#   c-socket      NCCL's internal Socket (NCCL_NET_PLUGIN=none NCCL_NET=Socket)
#   c-refused     GDRTRACE_TRANSPORT=ib on a host with no RDMA device: NCCL falls back
#   c-notfound    NCCL_NET_PLUGIN=gdrtrase (misspelled)
#   c-gm-default  GDRTRACE_GPUMEM=1: NCCL's topology keeps GPU Direct off
#   c-gm-sys      GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS: /GDRDMA channels
#   c-gm-loc      GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=LOC
#   t-multi       pg_multi.py: four communicators (world, 2 groups, p2p) via the plugin
#   t-refused     pg_multi.py with GDRTRACE_TRANSPORT=ib
#   t-socket      pg_multi.py on NCCL's internal Socket
# Output: $OUT/nccl-logs/<case>/{command.txt,stdout.txt,stderr.txt,rc,
#   nccl.<host>.<pid>.log, recorders.zst (gdrtrace dump), verdict.txt},
#   and $OUT/nccl-logs.tar.gz.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/nccl-logs
mkdir -p "$W"
START=$(date +%s)
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONUNBUFFERED=1
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE
unset NCCL_NET_GDR_LEVEL NCCL_DMABUF_ENABLE GDRTRACE_REG GDRTRACE_GPUMEM GDRTRACE_TRANSPORT

[ -x build/gpu/nccl_check ] || bash tests/gpu/build.sh > "$W/build.log" 2>&1 ||
    { echo "nccl-logs.sh: build failed"; tail -5 "$W/build.log"; exit 1; }
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
TNCCL=$(torch_nccl_dir)

one() { # one CASE EXPECTRC VARS CMD...
    local c=$1 want=$2 vars=$3
    shift 3
    local d=$W/$c
    rm -rf "$d"
    run_env "$d" 120 info "GDRTRACE_DIR=$d/rec $vars" "$@"
    local rc=$?
    "$TOOL" verdict "$d/rec" > "$d/verdict.txt" 2>&1
    echo "exit $?" >> "$d/verdict.txt"
    if ls "$d"/rec/gdrtrace.*.rec > /dev/null 2>&1; then
        "$TOOL" dump -o "$d/recorders.zst" "$d/rec" > /dev/null 2>&1
    fi
    rm -rf "$d/rec" "$d/regcount"
    local ok=1
    case $want in any) ok=0 ;; *) [ "$rc" -eq "$want" ] && ok=0 ;; esac
    step "$c: command exit $rc (want $want), $(ls "$d"/nccl.*.log 2>/dev/null | wc -l) NCCL log(s)" $ok
}

C="build/gpu/nccl_check -b 8 -e 64K -f 64"
one c-plugin 0 "NCCL_NET_PLUGIN=$PLUGIN" $C
one c-byname 0 "NCCL_NET_PLUGIN=gdrtrace LD_LIBRARY_PATH=$ROOT/build/default:${LD_LIBRARY_PATH:-}" $C
one c-socket 0 "NCCL_NET_PLUGIN=none NCCL_NET=Socket" $C
one c-refused 0 "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_TRANSPORT=ib" $C
one c-notfound 0 "NCCL_NET_PLUGIN=gdrtrase" $C
one c-gm-default 0 "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_GPUMEM=1" $C
one c-gm-sys 0 "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" $C
one c-gm-loc 0 "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=LOC" $C
T="python3 tests/gpu/pg_multi.py --ranks 2 --eager"
TL="LD_LIBRARY_PATH=$TNCCL:${LD_LIBRARY_PATH:-}"
one t-multi 0 "$TL NCCL_NET_PLUGIN=$PLUGIN" $T
one t-refused 0 "$TL NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_TRANSPORT=ib" $T
one t-socket 0 "$TL NCCL_NET_PLUGIN=none NCCL_NET=Socket" $T

printf '%s\n' "${RESULTS[@]}" | tee "$OUTDIR/nccl-logs-summary.md"
tar -C "$OUTDIR" -czf "$OUTDIR/nccl-logs.tar.gz" nccl-logs
echo "== nccl-logs.sh done in $(($(date +%s) - START)) s, FAILED=$FAILED"
exit $FAILED
