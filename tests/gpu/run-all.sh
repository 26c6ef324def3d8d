#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# run-all.sh — the GPU-machine runbook, end to end, in one call (CI never runs
# it; see docs/results/gpu-nccl.md for how and where it was run).
#
#  1. build the plugin, the reader and the helpers (tests/gpu/build.sh)
#  2. real NCCL 2.28.3 (system): nccl_check, every collective 8 B … 1 GiB,
#     every result checked, in three configurations:
#        plugin  NCCL_NET_PLUGIN=<our .so>, recorder on
#        socket  NCCL's internal Socket transport (NCCL_NET_PLUGIN=none NCCL_NET=Socket)
#        norec   our plugin with GDRTRACE_DISABLE=1
#     and the same on PyTorch's NCCL 2.28.9 (LD_LIBRARY_PATH to its
#     libnccl.so.2; the version NCCL reports is checked) with plugin and socket
#  3. bandwidth targets: BW_OPS (every collective by default) 128 MiB … 1 GiB,
#     the three configurations interleaved, ROUNDS times each (median):
#     plugin ≥ 1.0 × Socket, recorder on ≥ 0.99 × off, per op and size
#  4. real NCCL 2.28.9 (PyTorch): DDP training, same three configurations;
#     losses must be bit-equal; time per step for each
#  5. the reader against NCCL's own log (plugin runs of 2 and 4): gdrtrace
#     verdict must say HOST-STAGED for every communicator and list the same
#     commIds; registrations counted by the recorder must equal those counted
#     by an independent witness plugin (regcount) wrapped around ours
#  6. the CUDA side of DMA-BUF: the plugin's regMr(NCCL_PTR_CUDA) export path
#     makes a real nv_dmabuf fd; the recorder records the attempt and the
#     reader says it failed for want of an RDMA device; `gdrtrace doctor`
#
# Two ranks share the one GPU as two "hosts" (different NCCL_HOSTIDs, set by
# nccl_check / train_ddp.py), so NCCL connects them through NET.
#
# PARTS picks sections (default all: "sweep bw torch reader dmabuf"), so the
# whole runbook can be split over two calls of a 10-minute limit; the build
# is reused (make is incremental).
#
# Output: everything under $OUT (or build/gpu-out): run-all.log, summary.md,
# logs.tar.gz (every run's stdout, NCCL logs, recorders, reader output).
# Exit: 0 when every step passed, 1 otherwise (summary.md says which failed).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/runs
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-300}
# The full-sweep configurations (a shorter run may leave out norec: the
# bandwidth rounds still measure it).
SWEEP_CFGS=${SWEEP_CFGS:-plugin socket norec}
PARTS=${PARTS:-sweep bw torch reader dmabuf}
BW_OPS=${BW_OPS:-all_reduce,all_gather,reduce_scatter,broadcast,sendrecv}
BW_SCALE=${BW_SCALE:-1}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$W"
exec > >(tee "$OUTDIR/run-all.log") 2>&1

START=$(date +%s)
declare -a RESULTS=()
FAILED=0
# step, run_env, torch_nccl_dir
. tests/gpu/runlib.sh

. tests/gpu/build.sh env
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
REGCOUNT=$ROOT/build/gpu/libnccl-net-regcount.so
CHECK="python3 tests/gpu/gpucheck.py"
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE

echo "== environment"
{
    date -u
    uname -r
    nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader
    head -1 /proc/driver/nvidia/version
    nvcc --version | tail -2
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
    ls -l /usr/lib/x86_64-linux-gnu/libnccl.so.2* 2>/dev/null
    grep -h NCCL_VERSION_CODE /usr/include/nccl.h | head -1
    nproc
} 2>&1 | tee "$W/environment.txt"

echo "== 1. build"
bash tests/gpu/build.sh > "$W/build.log" 2>&1
rc=$?
tail -5 "$W/build.log"
step "build: plugin, gdrtrace, nccl_check, helpers" $rc
[ $rc -eq 0 ] || { printf '%s\n' "${RESULTS[@]}" > "$OUTDIR/summary.md"; exit 1; }

# cfg_env CONFIG DIR: the variables that select a configuration.
cfg_env() {
    case $1 in
    plugin) echo "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$2/rec" ;;
    socket) echo "NCCL_NET_PLUGIN=none NCCL_NET=Socket" ;;
    norec) echo "NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DISABLE=1" ;;
    regcount) echo "NCCL_NET_PLUGIN=$REGCOUNT GT_REGCOUNT_INNER=$PLUGIN GT_REGCOUNT_DIR=$2/regcount GDRTRACE_DIR=$2/rec" ;;
    esac
}
# run_in DIR CONFIG DEBUG TIMEOUT CMD...: one run with its own logs.
run_in() {
    local d=$1 cfg=$2 dbg=$3 to=$4
    shift 4
    run_env "$d" "$to" "$dbg" "$(cfg_env "$cfg" "$d")" "$@"
}


if part sweep; then
echo "== 2. nccl_check on NCCL 2.28.3, 8 B … 1 GiB, every op: $SWEEP_CFGS"
for cfg in $SWEEP_CFGS; do
    run_in "$W/c-$cfg" $cfg info 150 build/gpu/nccl_check -b 8 -e 1G -f 4
    rc=$?
    grep -E '^(RESULT op=all_reduce|# nccl|PASS|FAIL)' "$W/c-$cfg/stdout.txt" | tail -4
    [ $rc -eq 0 ] || tail -5 "$W/c-$cfg/stderr.txt"
    $CHECK ncclcheck "$W/c-$cfg" > "$W/c-$cfg/check.txt"
    r2=$?
    tail -1 "$W/c-$cfg/check.txt"
    step "nccl_check 2.28.3 [$cfg]: all ops 8 B..1 GiB correct (exit $rc)" $((rc | r2))
done
# Each log check only for a configuration the sweep ran (SWEEP_CFGS may
# leave some out in a shorter confirmation run).
if [ -d "$W/c-socket" ]; then
    $CHECK nccllog "$W/c-socket" --expect socket > "$W/c-socket/nccllog.txt"
    step "NCCL log [socket]: NCCL's own Socket, GDR disabled" $?
fi
if [ -d "$W/c-norec" ]; then
    $CHECK nccllog "$W/c-norec" --expect plugin > "$W/c-norec/nccllog.txt"
    step "NCCL log [norec]: plugin loaded and assigned, GDR disabled" $?
fi

TNCCL=$(torch_nccl_dir)
TVER=$(python3 -c 'import torch; v = torch.cuda.nccl.version(); print(v[0] * 10000 + v[1] * 100 + v[2] if isinstance(v, tuple) else v)' 2>/dev/null)
echo "== 2b. nccl_check on PyTorch's NCCL ($TVER, ${TNCCL:-not found}), 8 B … 1 GiB: plugin socket"
for cfg in plugin socket; do
    if [ -z "$TNCCL" ] || [ ! -e "$TNCCL/libnccl.so.2" ]; then
        step "nccl_check on PyTorch's NCCL [$cfg]: its libnccl.so.2 was not found" 1
        continue
    fi
    LD_LIBRARY_PATH="$TNCCL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        run_in "$W/c928-$cfg" $cfg info 150 build/gpu/nccl_check -b 8 -e 1G -f 4
    rc=$?
    grep -E '^(RESULT op=all_reduce|# nccl|PASS|FAIL)' "$W/c928-$cfg/stdout.txt" | tail -4
    [ $rc -eq 0 ] || tail -5 "$W/c928-$cfg/stderr.txt"
    $CHECK ncclcheck "$W/c928-$cfg" --expect-version "$TVER" > "$W/c928-$cfg/check.txt"
    r2=$?
    grep -E 'version|PASS|FAIL' "$W/c928-$cfg/check.txt"
    step "nccl_check PyTorch's NCCL $TVER [$cfg]: all ops 8 B..1 GiB correct (exit $rc)" $((rc | r2))
done
if [ -d "$W/c928-plugin" ]; then
    $CHECK nccllog "$W/c928-plugin" --expect plugin > "$W/c928-plugin/nccllog.txt"
    step "NCCL log [plugin, NCCL $TVER]: plugin loaded and assigned, GDR disabled" $?
    $CHECK reader "$W/c928-plugin" --tool "$TOOL" > "$W/c928-plugin/reader-check.txt"
    rc=$?
    grep -E 'FAIL|verdict|same comm|PASS' "$W/c928-plugin/reader-check.txt" | head -20
    step "reader vs NCCL log [nccl_check, $TVER]: HOST-STAGED, same commIds" $rc
fi
$CHECK bwtable "$W" --sweep-only > "$W/sweeptable.txt"
fi

if part bw; then
echo "== 3. bandwidth rounds ($BW_OPS, 128 MiB … 1 GiB, $ROUNDS interleaved rounds)"
for r in $(seq 1 "$ROUNDS"); do
    for cfg in plugin socket norec; do
        run_in "$W/bw-$cfg-$r" $cfg warn 150 build/gpu/nccl_check -b 128M -e 1G -f 2 \
            -o "$BW_OPS" -s "$BW_SCALE"
        rc=$?
        [ $rc -eq 0 ] || { echo "bw-$cfg-$r failed ($rc)"; tail -3 "$W/bw-$cfg-$r/stderr.txt"; FAILED=1; }
    done
done
$CHECK bwtable "$W" > "$W/bwtable.txt"
rc=$?
grep -E '^  (ok|FAIL)' "$W/bwtable.txt"
step "bandwidth: plugin >= 1.0 x Socket at >= 128 MiB, recorder on >= 0.99 x off ($BW_OPS)" $rc
fi

if part torch; then
echo "== 4. PyTorch DDP on NCCL 2.28.9, $STEPS steps, three configurations"
for cfg in plugin socket norec; do
    run_in "$W/torch-$cfg" $cfg info 200 python3 tests/gpu/train_ddp.py run \
        --out "$W/torch-$cfg/losses" --steps "$STEPS" --timeout 190
    rc=$?
    tail -2 "$W/torch-$cfg/stdout.txt"
    step "torch DDP [$cfg] ran (exit $rc)" $rc
done
python3 tests/gpu/train_ddp.py compare "$W/torch-socket/losses" "$W/torch-plugin/losses" \
    "$W/torch-norec/losses" | tee "$W/torch-compare.txt"
step "torch DDP: losses bit-equal with and without the plugin" $?
fi

if part reader; then
echo "== 5. the reader against NCCL's log"
# (each only where this call's sections ran it)
if [ -d "$W/c-plugin" ]; then
    $CHECK reader "$W/c-plugin" --tool "$TOOL" > "$W/c-plugin/reader-check.txt"
    rc=$?
    grep -E 'FAIL|verdict|same comm|PASS' "$W/c-plugin/reader-check.txt" | head -20
    step "reader vs NCCL log [nccl_check, 2.28.3]: HOST-STAGED, same commIds" $rc
fi
if [ -d "$W/torch-plugin" ]; then
    $CHECK reader "$W/torch-plugin" --tool "$TOOL" > "$W/torch-plugin/reader-check.txt"
    rc=$?
    grep -E 'FAIL|verdict|same comm|PASS' "$W/torch-plugin/reader-check.txt" | head -20
    step "reader vs NCCL log [torch DDP, 2.28.9]: HOST-STAGED, same commIds" $rc
fi
run_in "$W/c-regcount" regcount info 120 build/gpu/nccl_check -b 8 -e 64M -f 8
rc=$?
$CHECK reader "$W/c-regcount" --tool "$TOOL" --regcount > "$W/c-regcount/reader-check.txt"
r2=$?
grep -E 'FAIL|regMr|PASS' "$W/c-regcount/reader-check.txt" | head -20
step "registrations: recorder == regcount witness [nccl_check, 2.28.3] (run exit $rc)" $((rc | r2))
run_in "$W/torch-regcount" regcount info 150 python3 tests/gpu/train_ddp.py run \
    --out "$W/torch-regcount/losses" --steps 30 --timeout 140
rc=$?
$CHECK reader "$W/torch-regcount" --tool "$TOOL" --regcount > "$W/torch-regcount/reader-check.txt"
r2=$?
grep -E 'FAIL|regMr|PASS' "$W/torch-regcount/reader-check.txt" | head -20
step "registrations: recorder == regcount witness [torch DDP, 2.28.9] (run exit $rc)" $((rc | r2))
fi

if part dmabuf; then
echo "== 6. DMA-BUF: a real nv_dmabuf export through the plugin's path; gdrtrace doctor"
d=$W/dmabuf
mkdir -p "$d/rec"
if [ -x build/gpu/dmabuf_reg ]; then
    GDRTRACE_DIR=$d/rec GDRTRACE_REG=dmabuf timeout 60 build/gpu/dmabuf_reg > "$d/stdout.txt" 2>&1
    echo "exit $?" >> "$d/stdout.txt"
    cat "$d/stdout.txt"
    $CHECK dmabuf "$d" --tool "$TOOL" > "$d/check.txt"
    rc=$?
    cat "$d/check.txt"
else
    echo "build/gpu/dmabuf_reg was not built"
    rc=1
fi
step "DMA-BUF: real nv_dmabuf fd, recorded; reader says no RDMA device" $rc
timeout 60 "$TOOL" doctor > "$W/doctor.txt" 2>&1
echo "exit $?" >> "$W/doctor.txt"
timeout 60 "$TOOL" doctor --json > "$W/doctor.json" 2> "$W/doctor.stderr"
cat "$W/doctor.txt"
grep -q nv_dmabuf "$W/doctor.txt"
step "gdrtrace doctor ran; its export check saw nv_dmabuf" $?
fi

echo "== summary"
{
    echo "# run-all.sh on $(hostname) — $(date -u +%Y-%m-%dT%H:%MZ), $(($(date +%s) - START)) s"
    echo
    echo '```'
    cat "$W/environment.txt"
    echo '```'
    echo
    printf -- '- %s\n' "${RESULTS[@]}"
    echo
    echo '## Bandwidth'
    cat "$W/bw-tables.md" 2>/dev/null || cat "$W/sweep-tables.md" 2>/dev/null
    echo
    echo '## Training (torch DDP)'
    echo '```'
    cat "$W/torch-compare.txt" 2>/dev/null
    echo '```'
    for f in c-plugin/reader-check.txt c928-plugin/reader-check.txt torch-plugin/reader-check.txt \
             c-regcount/reader-check.txt torch-regcount/reader-check.txt dmabuf/check.txt; do
        echo
        echo "## $f"
        echo '```'
        cat "$W/$f" 2>/dev/null
        echo '```'
    done
} > "$OUTDIR/summary.md"
printf '%s\n' "${RESULTS[@]}"
tar czf "$OUTDIR/logs.tar.gz" -C "$OUTDIR" runs 2>/dev/null
rm -rf "$W"
echo "total $(($(date +%s) - START)) s; $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)"
exit $FAILED
