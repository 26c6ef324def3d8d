#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# abtest.sh — the runbook's A/B on the GPU machine with its three groups side
# by side (application SLO, NCCL/RDMA evidence, host pressure).  CI never
# runs it.
#
# PyTorch DDP (tests/gpu/train_ddp.py), STEPS steps, two ranks each bound to
# one core (BIND, `taskset -c`, as `mpirun --bind-to core` binds), through
# the plugin:
#   A  host-staged sock (GDRTRACE_GPUMEM unset: NCCL stages through host
#      memory it registers as NCCL_PTR_HOST)
#   H  host-staged through the GPU-memory validation layer (GDRTRACE_GPUMEM=1
#      NCCL_NET_GDR_LEVEL=SYS GDRTRACE_REG=host: ptrSupport HOST, NCCL stages)
#   B  emulated DMA-BUF (GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS: NCCL hands
#      GPU memory; CUDA copies stand in for the NIC)
# run interleaved, k = 3 a side (docs/diff.md's protocol): A1, then H1 B1 G1,
# H2 B2 G2, H3 B3 G3, where G is a second group of H runs (H').  A vs B is
# the pair as first asked; diff must call it not comparable (transport sock
# vs sock+gpumem, GDRTRACE_GPUMEM, NCCL_NET_GDR_LEVEL differ).  H vs B
# differs in GDRTRACE_REG only, but both move GPU memory by CUDA copies (B's
# through the copier process): diff must say the effects are not measurable
# on an emulated NIC; H vs H' must be "no difference".  Each rank, after destroying its process group, is
# held (GT_HOLD_DIR) while this script reads /proc/<pid>/stat, every
# /proc/<pid>/task/<tid>/stat and the stat lines of the rank's descendants
# (the copier), and tests/gpu/abtest_poll.py keeps the last stat line of
# every thread that exits before (NCCL's proxy threads, polled every 10 ms
# on core 8); tests/gpu/abtest_proc.py then holds the recorders'
# host-pressure numbers against them (10 %).
#
# Steps (PASS/FAIL each):
#   1 build (make all)
#   2 the ten runs exit 0; the losses of all bit-equal (compare)
#   3 each run's recorder CPU (process, data-path threads) within 10 % of /proc
#     (a thread that exited before the hold counts with its CPU at its exit:
#     abtest_poll.py's last stat line of it)
#   4 `gdrtrace diff A1 B1`: the three groups and a conclusion line (not
#     comparable: the guard names the transport)
#   5 `gdrtrace diff --a H1 --a H2 --a H3 --b B1 --b B2 --b B3`: comparable,
#     "mechanism changed", "not measurable on an emulated NIC" with the
#     copier's share; --json's rule "emulated"
#   6 `gdrtrace diff` H1 H2 H3 against G1 G2 G3: "no difference (within noise)"
#   7 `gdrtrace diff --runs-a DIR --runs-b DIR` on archives of the runs
#     (gdrtrace dump, one a run): the same conclusion as step 5
# Output: $OUT/abtest/ (each run: command, stdout, stderr, rec/, proc/,
# proc-check.txt; summary-*.txt, diff-*.txt, diff-*.json), $OUT/abtest.md.
# Knobs: STEPS (100), BIND (2,3), RUN_TIMEOUT (80 s a run).  About 10 runs of
# 20-25 s: under 8 minutes with the build.
# Exit: 0 when every step passed.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/abtest
STEPS=${STEPS:-100}
BIND=${BIND:-2,3}
RUN_TIMEOUT=${RUN_TIMEOUT:-80}
mkdir -p "$W"
exec > >(tee -a "$OUTDIR/abtest.log") 2>&1
START=$(date +%s)
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE
unset NCCL_NET_GDR_LEVEL NCCL_DMABUF_ENABLE GDRTRACE_REG GDRTRACE_ALLOW_PEERMEM GDRTRACE_GPUMEM
unset GDRTRACE_EVENTS GDRTRACE_TRANSPORT GDRTRACE_JOB

summary_md() {
    {
        echo "# abtest.sh on $(hostname) — $(date -u +%Y-%m-%dT%H:%MZ), $(($(date +%s) - START)) s"
        echo
        echo '```'
        cat "$W/environment.txt" 2>/dev/null
        echo '```'
        printf -- '- %s\n' "${RESULTS[@]}"
        for f in "$W"/*/proc-check.txt "$W"/compare.txt "$W"/diff-*.txt; do
            [ -f "$f" ] || continue
            echo
            echo "## ${f#"$W"/}"
            echo '```'
            cat "$f"
            echo '```'
        done
    } > "$OUTDIR/abtest.md"
}
astep() {
    step "$@"
    summary_md
}

echo "== abtest.sh on $(hostname), $(date -u); STEPS=$STEPS BIND=$BIND"
{
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
    echo "cores: $(nproc); bind $BIND; clock ticks $(getconf CLK_TCK)"
    git log --oneline -1 2>/dev/null
} > "$W/environment.txt" 2>&1
cat "$W/environment.txt"

echo "== 1. build"
JOBS=16 make -j16 all > "$W/build.log" 2>&1
rc=$?
tail -3 "$W/build.log"
astep "1. build: plugin and gdrtrace" $rc
[ $rc -eq 0 ] || exit 1

# snapshot PID DIR: the rank's /proc while it is held.
snapshot() {
    local pid=$1 d=$2
    cat "/proc/$pid/stat" > "$d/$pid.stat" 2>/dev/null
    cat "/proc/$pid/status" > "$d/$pid.status" 2>/dev/null
    for t in /proc/"$pid"/task/*; do
        cat "$t/stat" > "$d/$pid.task.${t##*/}.stat" 2>/dev/null
    done
    # descendants (the GPU-memory copier), breadth first
    local q=$pid kids=""
    while [ -n "$q" ]; do
        local next=""
        for p in $q; do
            # shellcheck disable=SC2013 # the file is pids separated by spaces
            for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
                kids="$kids $c"
                next="$next $c"
            done
        done
        q=$next
    done
    : > "$d/$pid.children"
    for c in $kids; do cat "/proc/$c/stat" >> "$d/$pid.children" 2>/dev/null; done
}

# one NAME VARS: a held DDP run, its /proc snapshot, the recorder check.
one() {
    local name=$1 vars=$2 d=$W/$1
    rm -rf "$d"
    mkdir -p "$d/rec" "$d/hold" "$d/proc"
    echo "$vars GDRTRACE_DIR=$d/rec GT_HOLD_DIR=$d/hold python3 tests/gpu/train_ddp.py run" \
        "--out $d/losses --steps $STEPS --bind $BIND" > "$d/command.txt"
    # shellcheck disable=SC2086 # $vars is a list of VAR=VALUE words
    env $vars GDRTRACE_DIR="$d/rec" GT_HOLD_DIR="$d/hold" NCCL_DEBUG=WARN \
        timeout "$RUN_TIMEOUT" python3 tests/gpu/train_ddp.py run --out "$d/losses" \
        --steps "$STEPS" --bind "$BIND" --timeout $((RUN_TIMEOUT - 10)) \
        > "$d/stdout.txt" 2> "$d/stderr.txt" &
    local bg=$! t0
    # the threads that exit before the hold (NCCL's proxy threads), polled
    taskset -c 8 python3 tests/gpu/abtest_poll.py $bg "$d/proc/poll.txt" 0.01 &
    local poller=$!
    t0=$(date +%s)
    while kill -0 $bg 2>/dev/null && [ $(($(date +%s) - t0)) -lt "$RUN_TIMEOUT" ]; do
        [ -f "$d/hold/rank0.pid" ] && [ -f "$d/hold/rank1.pid" ] && break
        sleep 0.1
    done
    sleep 0.3 # let each rank reach its sleep
    for r in 0 1; do
        [ -f "$d/hold/rank$r.pid" ] || continue
        local pid
        pid=$(cat "$d/hold/rank$r.pid")
        cp "$d/hold/rank$r.pid" "$d/proc/rank$r.pid"
        snapshot "$pid" "$d/proc"
    done
    touch "$d/hold/go"
    wait $bg
    local rc=$?
    wait $poller
    echo "$rc" > "$d/rc"
    echo "$name: exit $rc; $(grep time_per_step "$d/stdout.txt" | tail -1)"
    python3 tests/gpu/abtest_proc.py "$d" > "$d/proc-check.txt" 2>&1
    local prc=$?
    cat "$d/proc-check.txt"
    return $((rc != 0 || prc != 0))
}

A_VARS="NCCL_NET_PLUGIN=$PLUGIN"
H_VARS="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS GDRTRACE_REG=host"
B_VARS="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS"
RUNS="A1 H1 B1 G1 H2 B2 G2 H3 B3 G3"
echo "== 2-3. runs $RUNS ($STEPS steps, ranks on cores $BIND)"
trained=0
checked=0
for n in $RUNS; do
    case $n in A*) v=$A_VARS ;; H* | G*) v=$H_VARS ;; *) v=$B_VARS ;; esac
    one "$n" "$v"
    [ "$(cat "$W/$n/rc")" = 0 ] || trained=1
    grep -q '^PASS' "$W/$n/proc-check.txt" || checked=1
    summary_md
done
losses=()
for n in $RUNS; do losses+=("$W/$n/losses"); done
python3 tests/gpu/train_ddp.py compare "${losses[@]}" > "$W/compare.txt" 2>&1
crc=$?
cat "$W/compare.txt"
astep "2. DDP $RUNS exit 0, losses bit-equal" $((trained || crc))
astep "3. recorder CPU (process, data-path threads) within 10 % of /proc, every rank" $checked

echo "== 4-7. gdrtrace"
for n in A1 H1 B1; do "$TOOL" summary "$W/$n/rec" > "$W/summary-$n.txt" 2>&1; done
# pair X Y: diff (text, json) into diff-X-Y.*; prints the text
pair() {
    "$TOOL" diff "$W/$1/rec" "$W/$2/rec" > "$W/diff-$1-$2.txt" 2>&1
    echo $? > "$W/diff-$1-$2.rc"
    "$TOOL" diff --json "$W/$1/rec" "$W/$2/rec" > "$W/diff-$1-$2.json" 2>&1
    cat "$W/diff-$1-$2.txt"
}
groups() { # file: the three groups and a conclusion line
    grep -q '^ application SLO' "$1" && grep -q '^ NCCL/RDMA evidence' "$1" &&
        grep -q '^ host pressure' "$1" && grep -q '^conclusion: ' "$1"
}
pair A1 B1
groups "$W/diff-A1-B1.txt" && grep -q '^conclusion: not comparable' "$W/diff-A1-B1.txt"
r=$? # before the step's text: its $(cat) would reset $?
astep "4. diff A1 B1 (sock vs gpumem): three groups, 'not comparable' (exit $(cat "$W/diff-A1-B1.rc"))" $r
# k runs a side: NAME and the --a/--b arguments; text and json into diff-NAME.*
multi() {
    local name=$1
    shift
    "$TOOL" diff "$@" > "$W/diff-$name.txt" 2>&1
    echo $? > "$W/diff-$name.rc"
    "$TOOL" diff --json "$@" > "$W/diff-$name.json" 2>&1
    cat "$W/diff-$name.txt"
}
HB=(--a "$W/H1/rec" --a "$W/H2/rec" --a "$W/H3/rec" --b "$W/B1/rec" --b "$W/B2/rec" --b "$W/B3/rec")
multi H-B "${HB[@]}"
c=$(grep '^conclusion: ' "$W/diff-H-B.txt")
groups "$W/diff-H-B.txt" && [ "$(cat "$W/diff-H-B.rc")" = 0 ] &&
    grep -q 'mechanism changed' <<<"$c" && grep -q 'not measurable on an emulated NIC' <<<"$c" &&
    grep -q "copier's share of host CPU: B [0-9]* %" <<<"$c" &&
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["rule"] != "emulated" or d["statistics"]["runs_a"] != 3)' "$W/diff-H-B.json"
r=$?
astep "5. diff H1-3 vs B1-3 (host-staged vs DMA-BUF, emulated, k=3): mechanism changed, not measurable on an emulated NIC" $r
multi H-G --a "$W/H1/rec" --a "$W/H2/rec" --a "$W/H3/rec" --b "$W/G1/rec" --b "$W/G2/rec" --b "$W/G3/rec"
grep -q '^conclusion: no difference (within noise)' "$W/diff-H-G.txt"
astep "6. diff H1-3 vs G1-3 (identical setting, k=3): no difference (within noise)" $?
mkdir -p "$W/runs-H" "$W/runs-B"
for n in H1 H2 H3 B1 B2 B3; do
    "$TOOL" dump -o "$W/runs-${n%?}/$n.zst" "$W/$n/rec" > /dev/null 2>&1
done
multi runs-H-B --runs-a "$W/runs-H" --runs-b "$W/runs-B"
[ "$(grep '^conclusion: ' "$W/diff-runs-H-B.txt")" = "$c" ]
astep "7. diff --runs-a/--runs-b on archives of the runs: the same conclusion as step 5" $?
"$TOOL" report -o "$W/report-H1-B1.html" --force --baseline "$W/H1/rec" "$W/B1/rec" > /dev/null 2>&1
"$TOOL" export --exited-within 1w "$W/B1/rec" > "$W/export-B1.prom" 2>&1

summary_md
tar czf "$OUTDIR/abtest-runs.tar.gz" -C "$OUTDIR" abtest 2>/dev/null
printf '%s\n' "${RESULTS[@]}"
echo "total $(($(date +%s) - START)) s; $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)"
exit $FAILED
