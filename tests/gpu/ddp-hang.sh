#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# ddp-hang.sh — diagnose a stalled DDP run under the GPU-memory validation
# mode: start train_ddp.py with CASE's variables, wait WAIT seconds, then keep
# every rank's thread stacks (gdb, else /proc wchan/syscall), the recorders'
# summary with per-message events, and NCCL's logs.  CI never runs it.
#
#   CASES="peermem dmabuf gdrread0" WAIT=25 bash tests/gpu/ddp-hang.sh
# Output: $OUT/ddp-hang/<case>/ (stacks.txt, summary.txt, stdout/stderr, logs).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/ddp-hang
WAIT=${WAIT:-25}
CASES=${CASES:-peermem dmabuf gdrread0}
mkdir -p "$W"
. tests/gpu/build.sh env
[ -x build/default/gdrtrace ] || bash tests/gpu/build.sh > "$W/build.log" 2>&1
mkdir -p build/gpu
gcc -std=c11 -O2 -g -Wall -Wextra -Werror -shared -fPIC tests/gpu/btdump.c -o build/gpu/libbtdump.so ||
    echo "ddp-hang.sh: btdump did not build: no native stacks"
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
for c in $CASES; do
    d=$W/$c
    mkdir -p "$d/rec"
    base="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$d/rec GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS GDRTRACE_GPUMEM_PEERMEM=1 GDRTRACE_EVENTS=all NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,PROXY NCCL_DEBUG_FILE=$d/nccl.%h.%p.log"
    case $c in
    peermem) vars="$base GDRTRACE_REG=peermem" ;;
    dmabuf) vars="$base" ;;
    gdrread0) vars="$base GDRTRACE_REG=peermem NCCL_NET_GDR_READ=0" ;;
    simple) vars="$base GDRTRACE_REG=peermem NCCL_PROTO=Simple" ;;
    mc32) vars="$base GDRTRACE_REG=peermem CUDA_DEVICE_MAX_CONNECTIONS=32" ;;
    # the copier process is the layer's only copy mode now: these two are
    # peermem and dmabuf (the names of the runs that found the stall's fix)
    process) vars="$base GDRTRACE_REG=peermem" ;;
    process-dmabuf) vars="$base" ;;
    *) vars="$base $c" ;;
    esac
    echo "$vars" > "$d/command.txt"
    # shellcheck disable=SC2086
    # PyTorch's NCCL flight recorder: each rank's collectives with their
    # states, dumped when the process group's timeout (GT_PG_TIMEOUT) passes.
    env $vars GT_PY_STACKS_AFTER=$((WAIT - 8)) GT_BTDUMP_DIR="$d" \
        GT_PG_TIMEOUT=$((WAIT - 6)) TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
        TORCH_NCCL_ENABLE_TIMING=1 TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/fr.rank" \
        LD_PRELOAD="$ROOT/build/gpu/libbtdump.so" python3 tests/gpu/train_ddp.py run --out "$d/losses" --steps 5 \
        --timeout $((WAIT + 15)) > "$d/stdout.txt" 2> "$d/stderr.txt" &
    top=$!
    for _ in $(seq 1 "$WAIT"); do
        sleep 1
        kill -0 $top 2> /dev/null || break
    done
    {
        for p in $(pgrep -f "train_ddp.py.*--rank" || true); do
            echo "=== pid $p: $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-120)"
            for t in /proc/$p/task/*; do
                echo "  tid ${t##*/} $(cat "$t/comm") wchan=$(cat "$t/wchan" 2> /dev/null) syscall=$(cut -d' ' -f1 "$t/syscall" 2> /dev/null)"
            done
            # every thread's native stack (btdump.c), tgkill per thread; twice,
            # a second apart, so a thread that moves is told from one that waits
            for round in 1 2; do
                for t in /proc/$p/task/*; do
                    python3 -c 'import ctypes,sys; ctypes.CDLL(None).syscall(234, int(sys.argv[1]), int(sys.argv[2]), 37)' \
                        "$p" "${t##*/}" 2> /dev/null
                done
                sleep 1
            done
            if command -v gdb > /dev/null; then
                timeout 60 gdb -p "$p" -batch -ex 'set pagination off' \
                    -ex 'thread apply all bt 14' 2>&1 | grep -E '^Thread|^#' | cut -c1-220
            fi
        done
        nvidia-smi 2>&1 | tail -n 12
    } > "$d/stacks.txt" 2>&1
    wait $top
    echo "$?" > "$d/rc"
    # our plugin's frames, resolved (its symbols are hidden from backtrace_symbols)
    for f in "$d"/bt.*.txt; do
        [ -f "$f" ] || continue
        while IFS= read -r line; do
            case $line in
            *libnccl-net-gdrtrace.so\(+0x*)
                off=${line#*so(+}
                off=${off%%)*}
                echo "$line  <= $(addr2line -f -C -i -e "$PLUGIN" "$off" 2> /dev/null | paste -sd' ')" ;;
            *) echo "$line" ;;
            esac
        done < "$f" > "$f.resolved"
    done
    # the flight recorder's dumps (pickles), as text
    for f in "$d"/fr.rank*; do
        [ -f "$f" ] || continue
        python3 - "$f" > "$f.txt" 2>&1 << 'EOF'
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
for e in d.get("entries", []):
    print(e.get("record_id"), e.get("pg_id"), e.get("collective_seq_id"), e.get("p2p_seq_id"),
          e.get("profiling_name"), e.get("state"), e.get("input_sizes"),
          e.get("time_discovered_started_ns"), e.get("time_discovered_completed_ns"))
EOF
    done
    "$TOOL" summary --no-bars "$d/rec" > "$d/summary.txt" 2>&1
    "$TOOL" dump -o "$d/recorders.zst" "$d/rec" > /dev/null 2>&1
    rm -rf "$d/rec"
    echo "== $c: rc $(cat "$d/rc"), $(grep -c '^Thread' "$d/stacks.txt") thread stacks, $(tail -1 "$d/stdout.txt")"
done
tar -C "$OUTDIR" -czf "$OUTDIR/ddp-hang.tar.gz" ddp-hang
