#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# slo-refs.sh — raw reference data for the collective SLO definitions, on the
# GPU machine (CI never runs it): for each function nccl-tests has
# (BENCHES), 1-64 MiB, 2 ranks on the one GPU as two hosts through the
# plugin, three profilers on the same command:
#   proxy      ours, default mode (ProxyOp ends)
#   kernel     ours, GDRTRACE_COLL=kernel (KernelCh GPU timestamps)
#   inspector  NVIDIA's Inspector (NCCL_PROFILER_PLUGIN=<its .so>), verbose
#              JSON dumps, every operation kept, our net plugin still the
#              transport
# Nothing is judged here: profiler.sh judges; this keeps what the judges and
# the unit fixtures are written from.
# Needs: NCCL_TESTS_DIR (nccl-tests sources or build), INSPECTOR_DIR (the
# Inspector's sources, built here), tests/gpu/deps/root.
# Output: $OUT/slo-refs.tar.gz (every case: command, stdout, rec/, inspector/).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/slo-refs
mkdir -p "$W"
START=$(date +%s)
BUDGET=${BUDGET:-420}
BENCHES=${BENCHES:-"all_reduce all_gather reduce_scatter broadcast alltoall sendrecv"}
MODES=${MODES:-"proxy kernel inspector"}
. tests/gpu/build.sh env
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
make -j16 all > "$W/build.log" 2>&1 || { echo "slo-refs: make all failed"; tail -20 "$W/build.log"; exit 1; }
SO=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace

NT=""
for d in "${NCCL_TESTS_DIR:-}" "${NCCL_TESTS_DIR:-}/build" /tmp/gt-nccl-tests/build; do
    [ -n "$d" ] && [ -x "$d/all_reduce_perf" ] && { NT=$d; break; }
done
if [ -z "$NT" ] && [ -f "${NCCL_TESTS_DIR:-/nonexistent}/src/common.cu" ]; then
    rm -rf /tmp/gt-nccl-tests && cp -r "$NCCL_TESTS_DIR" /tmp/gt-nccl-tests &&
        (cd /tmp/gt-nccl-tests && timeout 300 make -j16 MPI=1 \
            MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/usr CUDA_HOME="$CUDA_HOME") \
            > "$W/nccl-tests-build.log" 2>&1 && NT=/tmp/gt-nccl-tests/build
fi
echo "nccl-tests: ${NT:-NOT FOUND}"
INSP=""
if [ -f "${INSPECTOR_DIR:-/nonexistent}/Makefile" ]; then
    rm -rf /tmp/gt-inspector && cp -r "$INSPECTOR_DIR" /tmp/gt-inspector &&
        (cd /tmp/gt-inspector && timeout 300 make -j16 CUDA_HOME="$CUDA_HOME") \
            > "$W/inspector-build.log" 2>&1
    INSP=$(find /tmp/gt-inspector -name 'libnccl-profiler-inspector*.so' | head -1)
fi
echo "inspector: ${INSP:-NOT BUILT (INSPECTOR_DIR=${INSPECTOR_DIR:-unset})}"
[ -n "$NT" ] || exit 1

cat > "$W/rank.sh" <<'EOF'
#!/bin/sh
export NCCL_HOSTID=gtslo${OMPI_COMM_WORLD_RANK:-0}
exec "$@"
EOF
chmod +x "$W/rank.sh"
unset NCCL_NET NCCL_PROFILER_PLUGIN GDRTRACE_COLL GDRTRACE_DISABLE NCCL_DEBUG NCCL_DEBUG_SUBSYS
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_TESTS_DEVICE=0
MPI="mpirun -np 2 --allow-run-as-root --bind-to core"

one() {
    local b=$1 mode=$2 d=$W/$1-$2
    mkdir -p "$d/rec" "$d/inspector"
    local left=$((BUDGET - ($(date +%s) - START)))
    [ $left -lt 20 ] && { echo "skipped (budget)" > "$d/stdout.txt"; return; }
    [ $left -gt 120 ] && left=120
    local xs="-x NCCL_NET_PLUGIN=$SO -x GDRTRACE_DIR=$d/rec -x NCCL_DEBUG=INFO"
    xs="$xs -x NCCL_DEBUG_SUBSYS=INIT,ENV,PROFILE -x NCCL_DEBUG_FILE=$d/nccl.%h.%p.log"
    xs="$xs -x NCCL_TESTS_DEVICE -x NCCL_MNNVL_ENABLE -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
    case $mode in
    kernel) xs="$xs -x GDRTRACE_COLL=kernel" ;;
    inspector)
        [ -n "$INSP" ] || { echo "no inspector" > "$d/stdout.txt"; return; }
        xs="$xs -x NCCL_PROFILER_PLUGIN=$INSP -x NCCL_INSPECTOR_ENABLE=1"
        xs="$xs -x NCCL_INSPECTOR_DUMP_DIR=$d/inspector -x NCCL_INSPECTOR_DUMP_VERBOSE=1"
        xs="$xs -x NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500000"
        xs="$xs -x NCCL_INSPECTOR_DUMP_COLL_RING_SIZE=65536 -x NCCL_INSPECTOR_DUMP_P2P_RING_SIZE=65536"
        ;;
    esac
    echo "$MPI $xs $W/rank.sh $NT/${b}_perf -b 1M -e 64M -f 4 -w 5 -n 20" > "$d/command.txt"
    # shellcheck disable=SC2086
    timeout "$left" $MPI $xs "$W/rank.sh" "$NT/${b}_perf" -b 1M -e 64M -f 4 -w 5 -n 20 \
        > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo $? > "$d/rc"
    "$TOOL" summary "$d/rec" > "$d/summary.txt" 2>&1
    "$TOOL" summary --json "$d/rec" > "$d/summary.json" 2>&1
    echo "$b $mode rc $(cat "$d/rc") $(( $(date +%s) - START )) s"
}
for b in $BENCHES; do
    for m in $MODES; do one "$b" "$m"; done
done
tar -C "$OUTDIR" -czf "$OUTDIR/slo-refs.tar.gz" slo-refs
ls -la "$OUTDIR/slo-refs.tar.gz"
