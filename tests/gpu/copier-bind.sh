#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# copier-bind.sh — the GPU-memory validation layer's copier with ranks bound
# as launchers bind them, on the GPU machine (CI never runs it).  Two ranks on
# the one GPU as two hosts (distinct NCCL_HOSTID: every byte crosses the
# network plugin), NCCL 2.28.3 (system) for NVIDIA's nccl-tests, PyTorch's
# NCCL for DDP.
#
#   bindings  core:    mpirun --bind-to core (OpenMPI's default for 2 ranks)
#             taskset: mpirun --bind-to none, each rank `taskset -c <rank>`
#                      (one core per rank, as srun --cpu-bind=cores)
#   runs      dmabuf:  GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS (emulated
#                      DMA-BUF, copies in the copier process)
#             sock:    the plugin's sock, host-staged
#             socket:  NCCL's own Socket transport
#   1. nccl-tests all_reduce, all_gather, sendrecv 1 MiB .. 256 MiB (x4) under
#      each binding: emulated DMA-BUF >= 0.9x host-staged sock busbw per size;
#      #wrong 0 everywhere
#   2. DDP (tests/gpu/train_ddp.py) STEPS steps, ranks bound one core each
#      (GT_BIND_CPUS=0,1): dmabuf and sock losses bit-equal to Socket's;
#      the dmabuf job idles GT_PAUSE_S s before it ends (the copier's idle CPU)
#   3. `gdrtrace diff` sock (A) vs dmabuf (B), DDP and all_reduce under
#      binding: send/recv p50 B/A recorded, not judged (an emulated path's
#      latencies include CUDA copies a real NIC does not make)
#   The copier's CPU: the plugin's INFO line at stop ("… N copies, X GB,
#   CPU Y s (Z s per GB)") in NCCL's logs, and /proc/<pid>/stat sampled every
#   0.25 s (copier-samples.txt: time pid utime+stime ticks, Cpus_allowed_list).
#
# Needs: nccl-tests (NCCL_TESTS_DIR: a build with MPI, or its sources, built
# here with MPI=1), mpirun, tests/gpu/deps/root for the plugin's build deps.
# Output: $OUT/copier-bind/ (copier-bind.log, summary.md, judge.txt, one
# folder per run with command, stdout, stderr, NCCL logs, recorders, samples)
# and $OUT/copier-bind.tar.gz.  BUDGET (s, default 440) stops starting runs;
# BINDS, BENCHES, NT_KINDS (default: all of the above) and DDP (1, 0: no DDP)
# choose a subset for a shorter call; RUN_NAME (copier-bind) names the folder.
# Exit 0 when every check passed, 1 otherwise.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTBASE=${OUT:-$ROOT/build/gpu-out}
NAME=${RUN_NAME:-copier-bind}
W=$OUTBASE/$NAME
BUDGET=${BUDGET:-440}
STEPS=${STEPS:-100}
BINDS=${BINDS:-core taskset}
BENCHES=${BENCHES:-all_reduce all_gather sendrecv}
NT_KINDS=${NT_KINDS:-dmabuf sock socket}
DDP=${DDP:-1}
START=$(date +%s)
mkdir -p "$W"
exec > >(tee -a "$W/copier-bind.log") 2>&1
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
left() { echo $((BUDGET - ($(date +%s) - START))); }

echo "== copier-bind.sh on $(hostname), $(date -u)"
{
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
    bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f')
    echo "GPU NUMA node: $(cat "/sys/bus/pci/devices/${bus#0000}/numa_node" 2>/dev/null ||
        cat "/sys/bus/pci/devices/${bus:4}/numa_node" 2>/dev/null || echo '?')"
    echo "CPUs: $(nproc) allowed here ($(taskset -pc $$ 2>&1 | sed 's/.*: //')), nodes: $(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)"
    grep -h NCCL_VERSION_CODE /usr/include/nccl.h | head -1
    mpirun --allow-run-as-root --version 2>&1 | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
} 2>&1 | tee "$W/environment.txt"

echo "== build"
if ! make -j16 all > "$W/build.log" 2>&1; then
    tail -20 "$W/build.log"
    step "make all" 1
    printf '%s\n' "${RESULTS[@]}" > "$W/summary.md"
    exit 1
fi
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
NT=""
for d in "${NCCL_TESTS_DIR:-}" "${NCCL_TESTS_DIR:-}/build" "$ROOT/shared/nccl-tests" \
    "$ROOT/shared/nccl-tests/build" /opt/nccl-tests/build "$HOME/nccl-tests/build" \
    /tmp/gt-nccl-tests/build; do
    [ -n "$d" ] && [ -x "$d/all_reduce_perf" ] && [ -x "$d/sendrecv_perf" ] && { NT=$d; break; }
done
if [ -z "$NT" ]; then
    for d in "${NCCL_TESTS_DIR:-}" "$ROOT/shared/nccl-tests" /opt/nccl-tests; do
        [ -n "$d" ] && [ -f "$d/src/common.cu" ] || continue
        rm -rf /tmp/gt-nccl-tests && cp -r "$d" /tmp/gt-nccl-tests &&
            (cd /tmp/gt-nccl-tests && timeout 240 make -j16 MPI=1 \
                MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/usr \
                CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}) > "$W/nccl-tests-build.log" 2>&1 &&
            NT=/tmp/gt-nccl-tests/build
        break
    done
fi
echo "nccl-tests: ${NT:-NOT FOUND (NCCL_TESTS_DIR=${NCCL_TESTS_DIR:-unset})}"

cat > "$W/rank.sh" <<'EOF'
#!/bin/sh
# One "host" per rank on the one GPU; BIND=taskset: this rank on core <rank>
# only (what srun --cpu-bind=cores gives), set before the program starts.
r=${OMPI_COMM_WORLD_RANK:-0}
export NCCL_HOSTID=gtcb$r
[ "${BIND:-}" = taskset ] && taskset -pc "$r" $$ > /dev/null
taskset -pc $$ > "$RUNDIR/bind.rank$r.txt" 2>&1
exec "$@"
EOF
chmod +x "$W/rank.sh"
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE
unset NCCL_NET_GDR_LEVEL NCCL_DMABUF_ENABLE GDRTRACE_REG GDRTRACE_GPUMEM GDRTRACE_GPUMEM_PEERMEM
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_TESTS_DEVICE=0 PYTHONUNBUFFERED=1
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# vars_of KIND DIR: the environment of one run
vars_of() {
    case $1 in
    dmabuf) echo "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$2/rec GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" ;;
    sock) echo "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$2/rec" ;;
    socket) echo "NCCL_NET_PLUGIN=none NCCL_NET=Socket" ;;
    esac
}

# sampler DIR: every copier's CPU ticks and CPUs, every 0.25 s, until killed
sampler() {
    local out=$1/copier-samples.txt p
    while :; do
        for p in $(pgrep -f 'gdrtrace-gpumem-copier --serve'); do
            local st cpus
            st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}') || continue
            [ -n "$st" ] || continue
            cpus=$(awk '/Cpus_allowed_list/ {print $2}' "/proc/$p/status" 2>/dev/null)
            echo "$(date +%s.%N | cut -c1-14) $p $st ${cpus:-?}"
        done >> "$out"
        sleep 0.25
    done
}

# nt BIND BENCH KIND: one nccl-tests run, 1 MiB .. 256 MiB
nt() {
    local bind=$1 b=$2 k=$3
    local d=$W/nt-$bind-$b-$k
    mkdir -p "$d/rec"
    local l
    l=$(left)
    if [ "$l" -lt 25 ]; then
        echo "skipped: BUDGET spent" > "$d/stdout.txt"
        echo 124 > "$d/rc"
        return
    fi
    [ "$l" -gt 90 ] && l=90
    local mpi="mpirun -np 2 --allow-run-as-root --oversubscribe --report-bindings"
    if [ "$bind" = core ]; then mpi="$mpi --bind-to core"; else mpi="$mpi --bind-to none"; fi
    local xs="-x NCCL_TESTS_DEVICE -x NCCL_MNNVL_ENABLE -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
    xs="$xs -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET -x NCCL_DEBUG_FILE=$d/nccl.%h.%p.log"
    xs="$xs -x BIND=$bind -x RUNDIR=$d"
    local v
    for v in $(vars_of "$k" "$d"); do xs="$xs -x $v"; done
    local cmd="$mpi $xs $W/rank.sh $NT/${b}_perf -b 1M -e 256M -f 4 -n 10 -w 2 -c 1"
    echo "$cmd" > "$d/command.txt"
    sampler "$d" &
    local sp=$!
    # shellcheck disable=SC2086
    timeout "$l" $cmd > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo $? > "$d/rc"
    kill "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    echo "  nt $bind $b $k: exit $(cat "$d/rc"), $(grep -m1 'Avg bus bandwidth' "$d/stdout.txt" || echo 'no average')"
}

# ddp KIND: train_ddp.py, ranks bound one core each
ddp() {
    local k=$1
    local d=$W/ddp-$k
    mkdir -p "$d/rec"
    local l
    l=$(left)
    if [ "$l" -lt 60 ]; then
        echo "skipped: BUDGET spent" > "$d/stdout.txt"
        echo 124 > "$d/rc"
        return
    fi
    [ "$l" -gt 150 ] && l=150
    local pause=""
    [ "$k" = dmabuf ] && pause="GT_PAUSE_S=4"
    sampler "$d" &
    local sp=$!
    run_env "$d" "$l" info "$(vars_of "$k" "$d") GT_BIND_CPUS=0,1 $pause" \
        python3 tests/gpu/train_ddp.py run --out "$d/losses" --steps "$STEPS" --timeout $((l - 5))
    kill "$sp" 2>/dev/null
    wait "$sp" 2>/dev/null
    echo "  ddp $k: exit $(cat "$d/rc"); $(grep time_per_step "$d/stdout.txt")"
}

if [ -z "$NT" ]; then
    step "nccl-tests found or built" 1
else
    case " $BINDS " in *" core "*)
        echo "== 1a. nccl-tests, mpirun --bind-to core"
        for b in $BENCHES; do
            for k in $NT_KINDS; do nt core "$b" "$k"; done
        done
    esac
fi
if [ "$DDP" = 1 ]; then
    echo "== 2. DDP $STEPS steps, one core per rank"
    for k in dmabuf sock socket; do ddp "$k"; done
fi
if [ -n "$NT" ]; then
    case " $BINDS " in *" taskset "*)
        echo "== 1b. nccl-tests, one core per rank (taskset)"
        for b in $BENCHES; do
            for k in $NT_KINDS; do nt taskset "$b" "$k"; done
        done
    esac
fi

echo "== 3. gdrtrace diff sock (A) vs dmabuf (B)"
for pair in ddp nt-core-all_reduce nt-taskset-all_reduce; do
    a=$W/$pair-sock b=$W/$pair-dmabuf
    [ -d "$a/rec" ] && [ -d "$b/rec" ] || continue
    "$TOOL" diff "$a/rec" "$b/rec" > "$W/diff-$pair.txt" 2>&1
    "$TOOL" diff --json "$a/rec" "$b/rec" > "$W/diff-$pair.json" 2> "$W/diff-$pair.err"
    "$TOOL" verdict "$b/rec" > "$b/verdict.txt" 2>&1
done
python3 tests/gpu/train_ddp.py compare "$W/ddp-socket/losses" "$W/ddp-dmabuf/losses" \
    "$W/ddp-sock/losses" > "$W/ddp-compare.txt" 2>&1
echo "== judge"
python3 tests/gpu/copier_bind_judge.py "$W" > "$W/judge.txt" 2>&1
rc=$?
cat "$W/judge.txt"
step "copier under binding: busbw, DDP losses, diff p50, copier CPU (judge.txt)" $rc
{
    echo "# copier-bind.sh on $(hostname) — $(date -u +%Y-%m-%dT%H:%MZ), $(($(date +%s) - START)) s"
    echo
    echo '```'
    cat "$W/environment.txt"
    echo '```'
    printf -- '- %s\n' "${RESULTS[@]}"
    echo
    echo '```'
    cat "$W/judge.txt"
    echo '```'
} > "$W/summary.md"
tar czf "$OUTBASE/$NAME.tar.gz" -C "$OUTBASE" "$NAME" 2>/dev/null
echo "total $(($(date +%s) - START)) s; $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)"
exit $FAILED
