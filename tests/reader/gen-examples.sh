#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gen-examples.sh — regenerates docs/examples/ from real runs of the built
# gdrtrace on fixture recorders (and on the harness's recorders when the
# harness is built).  Run it after changing any output (check-examples.sh,
# in make check, fails until the examples match):
#     make tests && tests/reader/gen-examples.sh
set -eu
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
FX=$BUILD/tests/reader_fixture
D=${EXAMPLES_DIR:-docs/examples}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$D" "$T/dev/shm" "$T/job" "$T/peermem-run" "$T/dmabuf-run" "$T/other-kernel"
# a two-node job: one communicator across both nodes, DMA-BUF everywhere
$FX dmabuf "$T/job/gdrtrace.job42.node-a.1001.rec" --host node-a --pid 1001 --rank 0 --comm 0x5e1a7c0ffee00001
$FX dmabuf "$T/job/gdrtrace.job42.node-b.2001.rec" --host node-b --pid 2001 --rank 1 --comm 0x5e1a7c0ffee00001 --latency 110
# A/B runs
$FX dmabuf "$T/dmabuf-run/gdrtrace.jobA.node-a.1.rec" --pid 1 --job jobA
$FX peermem "$T/peermem-run/gdrtrace.jobB.node-a.2.rec" --pid 2 --job jobB --latency 125
$FX peermem "$T/other-kernel/gdrtrace.jobC.node-a.3.rec" --pid 3 --job jobC --kernel 6.8.0-51-generic --nccl 22704
# one per verdict
for k in dmabuf peermem host mixed fallback error nodata; do
    mkdir -p "$T/$k"; $FX "$k" "$T/$k/gdrtrace.job-$k.node-a.4242.rec" --job "job-$k"
done
# The fixtures' owner is whoever generates them: shown as root (ls's owner
# column, summary's owner line), so the examples do not depend on the user.
me=$(id -un)
own_re="s/^(.{62})$(printf '%-10s' "$me")/\1$(printf '%-10s' root)/; s/^(   owner +)$me\$/\1root/"
[ "$me" = root ] && own_re=""
run() { # name, command...: "$ cmd" then its output and exit code
    local f="$D/$1.txt"; shift
    { echo "\$ gdrtrace ${*}" | sed "s|$T/||g"; "$G" "$@" 2>&1 | sed "s|$T/||g" | sed -E "$own_re"; echo "[exit ${PIPESTATUS[0]}]"; } >"$f" || true
}
cd_run() { (cd "$T" && run "$@"); }
run ls ls "$T/job" "$T/fallback"
run summary summary "$T/job"
run summary-full summary --full "$T/job"
run summary-fallback summary --full --events --no-bars "$T/fallback"
# a thousand ranks (reader_scale gen: 8 a node, a world communicator and one
# per node), four made to differ: peermem, a fallback, 10x slower, no rank
mkdir -p "$T/ranks1000"
$BUILD/tests/reader_scale gen "$T/ranks1000" 1000 small natural peermem=17 fallback=42 slow=99 unknown=500
run summary-1000-ranks summary "$T/ranks1000"
run verdict-1000-ranks verdict "$T/ranks1000"
run summary-json summary --json "$T/dmabuf"
for k in dmabuf peermem host mixed fallback error nodata; do run "verdict-$k" verdict "$T/$k"; done
# what became of a process (format 1.3): refused by the plugin, died inside an inner plugin's call
mkdir -p "$T/refused" "$T/crashed"
$FX nodata "$T/refused/gdrtrace.job-refused.node-a.4242.rec" --job job-refused --fate refused
$FX dmabuf "$T/refused/gdrtrace.job-refused.node-b.4343.rec" --job job-refused --host node-b --pid 4343
$FX nodata "$T/crashed/gdrtrace.job-crashed.node-a.4242.rec" --job job-crashed --fate crashed --state live
run verdict-bypassed verdict "$T/refused"
run verdict-crashed verdict "$T/crashed"
run ls-crashed ls "$T/crashed" "$T/refused"
run verdict-expect verdict --expect dmabuf "$T/host"
run verdict-json verdict --json "$T/job"
# NCCL's log of job42 joined: its communicator, one NCCL put on IB, a node-local one
run verdict-nccl-log verdict --nccl-log tests/reader/nccl-logs/synthetic-example-job42 "$T/job"
run summary-nccl-log summary --no-bars --nccl-log tests/reader/nccl-logs/synthetic-example-job42 "$T/job"
$G dump -o "$T/job42.zst" "$T/job" >/dev/null
run dump dump -o "$T/job42-again.zst" "$T/job"
run verdict-archive verdict "$T/job42.zst"
run diff diff "$T/dmabuf-run" "$T/peermem-run"
run diff-warning diff "$T/dmabuf-run" "$T/other-kernel"
# export: a node's folder with two ranks of job42 that exited a minute ago
# and one of job41 that exited two hours ago (left out: --exited-within 15m)
mkdir -p "$T/node"
$FX dmabuf "$T/node/gdrtrace.job42.node-a.1001.rec" --host node-a --pid 1001 --rank 0 --comm 0x5e1a7c0ffee00001 --age 60
$FX dmabuf "$T/node/gdrtrace.job42.node-a.1002.rec" --host node-a --pid 1002 --rank 1 --comm 0x5e1a7c0ffee00001 --age 60 --latency 110
$FX host "$T/node/gdrtrace.job41.node-a.901.rec" --host node-a --pid 901 --job job41 --age 7200
run export export "$T/node"
run export-per-process export --per-process "$T/node"
run export-json export --json "$T/node"
run watch watch --all --once --rows 30 --cols 100 "$T/job"
# prune: a node's folder after two jobs (a live rank, exited and crashed
# ones, a stray file); the live rank is the fixture holding its recorder
mkdir -p "$T/shm"; mkfifo "$T/hold"
$FX dmabuf "$T/shm/gdrtrace.job42.node-a.live.rec" --hold <"$T/hold" >"$T/hold.out" &
hold_pid=$!
exec 9>"$T/hold"
for _ in $(seq 200); do grep -q ready "$T/hold.out" 2>/dev/null && break; sleep 0.05; done
$FX dmabuf "$T/shm/gdrtrace.job41.node-a.40001.rec" --job job41 --pid 40001 --age 90000
$FX host "$T/shm/gdrtrace.job41.node-a.40002.rec" --job job41 --pid 40002 --state live --age 90000
$FX dmabuf "$T/shm/gdrtrace.job40.node-a.30001.rec" --job job40 --pid 30001 --age 1800
printf 'scratch' >"$T/shm/gdrtrace.scratch.rec"
run prune-dry-run prune --dry-run --older-than 12h "$T/shm"
run prune prune --job job41 "$T/shm"
exec 9>&- # the holder exits
sed -i "s/\b$hold_pid\b/31337/g" "$D/prune-dry-run.txt" "$D/prune.txt"
if [ -x "$BUILD/harness/harness" ]; then
    mkdir -p "$T/harness"
    "$BUILD/harness/harness" --abi 12 --data-only --iters 10 --max-size 1M --dir "$T/harness" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$D/harness-run.txt" 2>&1 || true
    run harness-verdict verdict "$T/harness"
    run harness-summary summary "$T/harness"
    # gdrtrace run around the harness: its lines and the verdict (the harness's
    # own lines are in harness-run.txt)
    mkdir -p "$T/run-shm"
    job="harness --abi 12 --data-only --iters 4 --max-size 256K"
    {
        echo "\$ gdrtrace run --full --dir job42 -- $job"
        (cd "$T" && env -u NCCL_NET_PLUGIN -u NCCL_DEBUG GDRTRACE_DIR="$T/run-shm" SLURM_JOB_ID=42 \
            SLURM_PROCID=0 "$OLDPWD/$G" run --full --dir job42 -- "$OLDPWD/$BUILD/harness/"$job 2>&1 |
            grep -v -e '^\[v12' -e '^harness: ' -e 'NCCL_PROFILER_PLUGIN left unset'
            echo "[exit ${PIPESTATUS[0]}]")
    } | sed "s|$T/||g; s|$PWD/||g" >"$D/harness-gdrtrace-run.txt"
fi
# the examples must not carry machine-specific paths or times
sed -i -E 's/gdrtrace watch  [0-9-]+ [0-9:]+/gdrtrace watch  (time)/' "$D/watch.txt"
ls "$D"
