#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# profiler.sh — collective metrics from NCCL's profiler interface, on the GPU
# machine (CI never runs it).  NVIDIA's nccl-tests, 2 ranks on the one GPU as
# two hosts (distinct NCCL_HOSTID, so every byte crosses the plugin), NCCL
# 2.28.3 of the system; PyTorch's NCCL 2.28.9 for the multi-communicator job.
#   auto       the profiler found in the net plugin's library (2.28.3+):
#              all_reduce 8 B-64 KiB, per size count == warm-up + 2 x (1 +
#              iters + check); rank/nRanks from NCCL
#   explicit   NCCL_PROFILER_PLUGIN=<our library> (the 2.23-2.27 path)
#   slo        the collective SLO per function (docs/collectives.md), for
#              each of SLO_BENCHES (all_reduce all_gather reduce_scatter
#              broadcast alltoall sendrecv), 1-64 MiB, the same command three
#              times: ours in mode proxy (counts exact, our mean within 5 % of
#              nccl-tests' time: a mean against a mean), ours in mode kernel
#              and NVIDIA's Inspector (counts exact, our p50 within 10 % of
#              Inspector's: both then time the GPU kernel)
#   ddp        the PyTorch DDP job (train_ddp.py, DDP_STEPS steps) in mode
#              kernel and under Inspector: per (function, size) cell with
#              >= 20 operations, our count equals Inspector's and our p50 is
#              within 10 % of its p50 (no nccl-tests time to hold a mean to)
#   other      NCCL_PROFILER_PLUGIN=<another profiler>: NCCL keeps it; our
#              status records why collective metrics are absent
#   none       NCCL_PROFILER_PLUGIN=none: no collective metrics
#   torch      pg_multi.py (four communicators): each one's operations
#              attributed to it, every profiler commId equal to a net commId
#   ovh-small  all_reduce 8 B-64 KiB: profiler on vs NCCL_PROFILER_PLUGIN=none,
#              alternated, 3 pairs (+ kernel mode)
#   ovh-large  all_reduce 64 MiB-1 GiB busbw on vs off, 2 pairs
# Needs: nccl-tests sources or build in NCCL_TESTS_DIR (built here with MPI
# when no all_reduce_perf is found), OpenMPI, tests/gpu/deps/root (carry);
# for slo and ddp, NVIDIA Inspector's sources in INSPECTOR_DIR (NVIDIA/nccl's
# plugins/profiler/inspector, 2.30.x: it speaks profiler v5, so NCCL 2.28
# loads it), built here as tests/gpu/slo-refs.sh builds it.
# Output: $OUT/profiler/<case>/ (command, stdout/stderr, NCCL logs, rec/,
# collstat.tsv, judge.txt), $OUT/profiler-summary.md, $OUT/profiler.tar.gz.
# CASES="auto explicit ..." limits the cases; SLO_BENCHES the benchmarks of
# slo; DDP_STEPS (default 30); OVH_PAIRS the on/off pairs of ovh-small
# (default 3).  BUDGET (default 540 s) bounds the whole script: a case
# started past it is skipped (and fails).  Estimated on the H100 of the
# reference run: builds ~1.5 min, slo 18 runs ~3 min, ddp ~1.3 min, the
# rest ~4 min; where one device call must stay under 10 min, split it:
# CASES=slo, then CASES="auto explicit other none torch ddp ovh-small
# ovh-large".  Exit: 0 all pass, 1 a failure.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/profiler
mkdir -p "$W"
START=$(date +%s)
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
BUDGET=${BUDGET:-540} # seconds for the whole script; later cases are skipped past it
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
CASES=${CASES:-"auto explicit slo other none torch ddp ovh-small ovh-large"}
SLO_BENCHES=${SLO_BENCHES:-"all_reduce all_gather reduce_scatter broadcast alltoall sendrecv"}
want() { [[ " $CASES " == *" $1 "* ]]; }
echo "== profiler.sh on $(hostname), $(date -u), cases: $CASES"
nvidia-smi -L 2>&1 | head -2
ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>&1 | head -3

# ---- build: the plugin, collstat, the other profiler, nccl-tests ----
{
    make -j16 all || exit 1
    objs=$(make -s --no-print-directory --eval='gt-print-objs: ; @echo $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(RECFILE_SRCS) $(BASE_SRCS)))' gt-print-objs) || exit 1
    mkdir -p build/gpu
    gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -I. tests/gpu/collstat.c \
        $objs -o build/gpu/collstat -ldl -lpthread || exit 1
    gcc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Iinclude tests/gpu/other_profiler.c \
        -o build/gpu/libother-prof.so || exit 1
} > "$W/build.log" 2>&1 || { echo "profiler.sh: build failed"; tail -20 "$W/build.log"; exit 1; }
SO=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
CS=$ROOT/build/gpu/collstat
NT=""
for d in "${NCCL_TESTS_DIR:-}" "${NCCL_TESTS_DIR:-}/build" "$ROOT/shared/nccl-tests" \
    "$ROOT/shared/nccl-tests/build" /opt/nccl-tests/build "$HOME/nccl-tests/build"; do
    [ -n "$d" ] && [ -x "$d/all_reduce_perf" ] && { NT=$d; break; }
done
if [ -z "$NT" ]; then
    src=""
    for d in "${NCCL_TESTS_DIR:-}" "$ROOT/shared/nccl-tests" /opt/nccl-tests; do
        [ -n "$d" ] && [ -f "$d/src/common.cu" ] && { src=$d; break; }
    done
    if [ -n "$src" ]; then
        rm -rf /tmp/gt-nccl-tests && cp -r "$src" /tmp/gt-nccl-tests &&
            (cd /tmp/gt-nccl-tests && timeout 300 make -j16 MPI=1 \
                MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/usr \
                CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}) > "$W/nccl-tests-build.log" 2>&1 &&
            NT=/tmp/gt-nccl-tests/build
    fi
fi
echo "nccl-tests: ${NT:-NOT FOUND (NCCL_TESTS_DIR=${NCCL_TESTS_DIR:-unset})}"
INSP=""
if (want slo || want ddp) && [ -f "${INSPECTOR_DIR:-/nonexistent}/Makefile" ]; then
    rm -rf /tmp/gt-inspector && cp -r "$INSPECTOR_DIR" /tmp/gt-inspector &&
        (cd /tmp/gt-inspector && timeout 300 make -j16 CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}") \
            > "$W/inspector-build.log" 2>&1
    INSP=$(find /tmp/gt-inspector -name 'libnccl-profiler-inspector*.so' | head -1)
fi
(want slo || want ddp) && echo "inspector: ${INSP:-NOT BUILT (INSPECTOR_DIR=${INSPECTOR_DIR:-unset})}"
# Inspector's settings: verbose JSON dumps of every operation (rings larger
# than any run here), its dump folder made before the ranks start
insp_vars() { # DUMP_DIR
    echo "NCCL_PROFILER_PLUGIN=$INSP NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR=$1" \
        "NCCL_INSPECTOR_DUMP_VERBOSE=1 NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500000" \
        "NCCL_INSPECTOR_DUMP_COLL_RING_SIZE=65536 NCCL_INSPECTOR_DUMP_P2P_RING_SIZE=65536"
}
cat > "$W/rank.sh" <<'EOF'
#!/bin/sh
# one "host" per rank on the one GPU: NCCL then uses the network between them
export NCCL_HOSTID=gtprof${OMPI_COMM_WORLD_RANK:-0}
exec "$@"
EOF
chmod +x "$W/rank.sh"
unset NCCL_NET NCCL_PROFILER_PLUGIN GDRTRACE_COLL GDRTRACE_DISABLE NCCL_DEBUG NCCL_DEBUG_SUBSYS
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_TESTS_DEVICE=0 PYTHONUNBUFFERED=1
MPI="mpirun -np 2 --allow-run-as-root --oversubscribe"

# nt CASE BENCH "VARS" ARGS...: one nccl-tests run through the plugin, with
# its recorders in CASE/rec and collstat's view of them.
nt() {
    local c=$1 b=$2 vars=$3
    shift 3
    local d=$W/$c
    rm -rf "$d"
    mkdir -p "$d/rec" "$d/inspector"
    local left=$((BUDGET - ($(date +%s) - START)))
    if [ $left -lt 30 ]; then
        echo "skipped: the script's time budget (BUDGET=$BUDGET s) is spent" | tee "$d/stdout.txt"
        echo 124 > "$d/rc"
        return
    fi
    [ $left -gt 240 ] && left=240
    local xs="-x NCCL_NET_PLUGIN=$SO -x GDRTRACE_DIR=$d/rec -x NCCL_DEBUG=INFO"
    xs="$xs -x NCCL_DEBUG_SUBSYS=INIT,ENV -x NCCL_DEBUG_FILE=$d/nccl.%h.%p.log"
    xs="$xs -x NCCL_TESTS_DEVICE -x NCCL_MNNVL_ENABLE -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH"
    local v
    for v in $vars; do xs="$xs -x $v"; done
    echo "$MPI $xs $W/rank.sh $NT/$b $*" > "$d/command.txt"
    # shellcheck disable=SC2086
    timeout "$left" $MPI $xs "$W/rank.sh" "$NT/$b" "$@" > "$d/stdout.txt" 2> "$d/stderr.txt"
    echo $? > "$d/rc"
    "$CS" "$d"/rec/*.rec > "$d/collstat.tsv" 2> "$d/collstat.err"
    "$TOOL" summary "$d/rec" > "$d/summary.txt" 2>&1
    "$TOOL" summary --json "$d/rec" > "$d/summary.json" 2>&1
}
judge() { # judge CASE ARGS... -> judge.txt; its exit status
    python3 tests/gpu/profiler_judge.py "$W/$1" "${@:2}" > "$W/$1/judge.txt" 2>&1
    local rc=$?
    cat "$W/$1/judge.txt"
    return $rc
}

if [ -z "$NT" ]; then
    step "nccl-tests found or built (NCCL_TESTS_DIR=${NCCL_TESTS_DIR:-unset})" 1
else
    if want auto; then
        nt auto-ar-small all_reduce_perf "" -b 8 -e 65536 -f 2 -w 5 -n 20
        judge auto-ar-small counts --w 5 --n 20 --c 1 --func AllReduce --nranks 2
        step "auto all_reduce 8 B-64 KiB: counts exact per size, rank/nRanks from NCCL" $?
        grep -h "PROFILER\|rofiler" "$W"/auto-ar-small/nccl.*.log 2>/dev/null | sort | uniq -c |
            head -10 > "$W/auto-ar-small/nccl-profiler-lines.txt"
    fi
    if want explicit; then
        nt explicit all_reduce_perf "NCCL_PROFILER_PLUGIN=$SO" -b 1M -e 16M -f 2 -w 5 -n 20
        judge explicit counts p50 --w 5 --n 20 --c 1 --func AllReduce --nranks 2 \
            --env-set "$SO"
        step "explicit NCCL_PROFILER_PLUGIN=<our library>: counts exact, p50 within 10 %" $?
    fi
    if want slo; then
        # one command, three profilers: -w 5 -n 20 (and the check op) per size
        args="-b 1M -e 64M -f 4 -w 5 -n 20"
        jargs="--w 5 --n 20 --c 1 --nranks 2"
        for b in $SLO_BENCHES; do
            # shellcheck disable=SC2086
            nt slo-$b-proxy ${b}_perf "" $args
            # shellcheck disable=SC2086
            judge slo-$b-proxy slo --bench $b $jargs --mode 1
            step "slo $b 1-64 MiB (proxy): counts exact, mean within 5 % of nccl-tests' time" $?
            if [ -z "$INSP" ]; then
                step "slo $b (kernel): NVIDIA Inspector built (INSPECTOR_DIR=${INSPECTOR_DIR:-unset})" 1
                continue
            fi
            # shellcheck disable=SC2086
            nt slo-$b-kernel ${b}_perf "GDRTRACE_COLL=kernel" $args
            # shellcheck disable=SC2086
            nt slo-$b-inspector ${b}_perf "$(insp_vars "$W/slo-$b-inspector/inspector")" $args
            # shellcheck disable=SC2086
            judge slo-$b-kernel slo --bench $b $jargs --mode 2 --no-mean \
                --inspector "$W/slo-$b-inspector"
            step "slo $b 1-64 MiB (kernel): counts exact, p50 within 10 % of NVIDIA Inspector's" $?
        done
    fi
    if want other; then
        rm -f "$W/other-prof.txt"
        nt other all_reduce_perf "NCCL_PROFILER_PLUGIN=$ROOT/build/gpu/libother-prof.so OTHER_PROF_OUT=$W/other-prof.txt" \
            -b 1M -e 1M -w 1 -n 5
        cp "$W/other-prof.txt" "$W/other/" 2>/dev/null
        judge other absent --env-set "$ROOT/build/gpu/libother-prof.so" --other-marker "$W/other-prof.txt"
        step "NCCL_PROFILER_PLUGIN=<another profiler>: it stays loaded, ours records why absent" $?
    fi
    if want none; then
        nt none all_reduce_perf "NCCL_PROFILER_PLUGIN=none" -b 1M -e 1M -w 1 -n 5
        judge none absent --env-set none
        step "NCCL_PROFILER_PLUGIN=none: honoured (no collective metrics)" $?
    fi
fi
if want torch; then
    d=$W/torch
    rm -rf "$d"
    mkdir -p "$d/rec"
    TNCCL=$(torch_nccl_dir)
    run_env "$d" 240 info "LD_LIBRARY_PATH=$TNCCL:${LD_LIBRARY_PATH:-} NCCL_NET_PLUGIN=$SO GDRTRACE_DIR=$d/rec NCCL_DEBUG_SUBSYS=INIT,NET,ENV" \
        python3 tests/gpu/pg_multi.py --ranks 2
    "$CS" "$d"/rec/*.rec > "$d/collstat.tsv" 2> "$d/collstat.err"
    "$TOOL" summary "$d/rec" > "$d/summary.txt" 2>&1
    "$TOOL" summary --json "$d/rec" > "$d/summary.json" 2>&1
    judge torch torch --nranks 2
    step "PyTorch pg_multi (4 communicators): each communicator's operations under its commId" $?
fi

if want ddp; then
    TNCCL=$(torch_nccl_dir)
    for m in kernel inspector; do
        d=$W/ddp-$m
        rm -rf "$d"
        mkdir -p "$d/rec" "$d/inspector"
        vars="LD_LIBRARY_PATH=$TNCCL:${LD_LIBRARY_PATH:-} NCCL_NET_PLUGIN=$SO GDRTRACE_DIR=$d/rec"
        [ $m = kernel ] && vars="$vars GDRTRACE_COLL=kernel"
        [ $m = inspector ] && vars="$vars $(insp_vars "$d/inspector")"
        if [ $m = inspector ] && [ -z "$INSP" ]; then
            echo "no Inspector" > "$d/stdout.txt"
            continue
        fi
        left=$((BUDGET - ($(date +%s) - START)))
        [ $left -lt 30 ] && { echo "skipped: budget" > "$d/stdout.txt"; continue; }
        [ $left -gt 240 ] && left=240
        run_env "$d" "$left" warn "$vars" python3 tests/gpu/train_ddp.py run --out "$d/losses" \
            --steps "${DDP_STEPS:-30}"
        "$CS" "$d"/rec/*.rec > "$d/collstat.tsv" 2> "$d/collstat.err"
        "$TOOL" summary "$d/rec" > "$d/summary.txt" 2>&1
        "$TOOL" summary --json "$d/rec" > "$d/summary.json" 2>&1
    done
    judge ddp-kernel inspector-only --icase "$W/ddp-inspector" --nranks 2
    step "PyTorch DDP (${DDP_STEPS:-30} steps, kernel): counts and p50 per cell as NVIDIA Inspector's" $?
fi

if [ -n "$NT" ]; then
    if want ovh-small; then
        for i in $(seq 1 "${OVH_PAIRS:-3}"); do
            nt ovh-small-on$i all_reduce_perf "" -b 8 -e 65536 -f 2 -w 5 -n 30 -c 0
            nt ovh-small-off$i all_reduce_perf "NCCL_PROFILER_PLUGIN=none" -b 8 -e 65536 -f 2 -w 5 -n 30 -c 0
            nt ovh-small-kernel$i all_reduce_perf "GDRTRACE_COLL=kernel" -b 8 -e 65536 -f 2 -w 5 -n 30 -c 0
        done
        python3 tests/gpu/profiler_judge.py "$W" overhead --prefix ovh-small --metric time \
            --min-ratio 0.99 > "$W/ovh-small.txt" 2>&1
        r=$?
        cat "$W/ovh-small.txt"
        step "all_reduce 8 B-64 KiB latency off/on >= 0.99 (median of ${OVH_PAIRS:-3} pair(s))" $r
    fi
    if want ovh-large; then
        for i in 1 2; do
            nt ovh-large-on$i all_reduce_perf "" -b 64M -e 1G -f 2 -w 1 -n 5 -c 0
            nt ovh-large-off$i all_reduce_perf "NCCL_PROFILER_PLUGIN=none" -b 64M -e 1G -f 2 -w 1 -n 5 -c 0
        done
        python3 tests/gpu/profiler_judge.py "$W" overhead --prefix ovh-large --metric busbw \
            --min-ratio 0.995 > "$W/ovh-large.txt" 2>&1
        r=$?
        cat "$W/ovh-large.txt"
        step "all_reduce 64 MiB-1 GiB busbw on/off >= 0.995 (median of 2 pairs)" $r
    fi
fi
{
    echo "# profiler.sh on $(hostname), $(date -u)"
    echo
    printf '%s\n' "${RESULTS[@]}"
} > "$OUTDIR/profiler-summary.md"
cat "$OUTDIR/profiler-summary.md"
echo "total $(($(date +%s) - START)) s"
tar -czf "$OUTDIR/profiler.tar.gz" -C "$OUTDIR" profiler profiler-summary.md 2>/dev/null
exit $FAILED
