#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# gpumem.sh — issue 20 on the GPU machine: real NCCL on its GPU Direct path
# through gdrtrace's GPU-memory validation mode (GDRTRACE_GPUMEM=1, emulated:
# no NIC, GPU memory moved by CUDA copies).  CI never runs it.  Each step is
# judged by tests/gpu/gpumem_judge.py, which quotes NCCL's own lines.
#
# PARTS (default "a b"; each part fits one device call of < 9 minutes, and
# each builds first: make is incremental on a warm machine):
#   a  NCCL 2.28.3 (system), the C program nccl_check (every element checked):
#      0  mode on, no NCCL_NET_GDR_LEVEL: NCCL keeps GPU Direct off (its
#         topology: "distance 8 > 5") -> HOST-STAGED (emulated)
#      1  NCCL_NET_GDR_LEVEL=SYS: GPU Direct on, /GDRDMA channels, NCCL's
#         regMrDmaBuf with real nv_dmabuf fds (the regcount witness counts
#         them), every op 8 B .. 1 GiB correct, DIRECT-DMABUF (emulated),
#         NCCL's commIds; the kernel corroboration taken while the job runs
#      1f step 1 with GDRTRACE_GPUMEM_FORCE_FLUSH=1 (8 B .. 16 MiB): NCCL flushes
#      2  GDRTRACE_REG=peermem, peermem emulated: regMr(CUDA) -> DIRECT-PEERMEM
#      3a import fails (EIO), peermem allowed -> FALLBACK, reason and errno
#      3b import fails, not allowed -> NCCL fails the communicator, no hang,
#         no crash; ERROR quoting the reason
#      4  NCCL_NET_GDR_LEVEL=LOC -> HOST-STAGED (emulated), the setting named
#   b  PyTorch's NCCL 2.28.9:
#      1' step 1 on 2.28.9 (8 B .. 64 MiB): GPU Direct on, DMA-BUF
#      5  DDP with DMA-BUF vs peermem (and NCCL's Socket): losses bit-equal;
#         `gdrtrace diff` says the runs differ only in the registration path
#         and shows the latency percentiles side by side
#      6  bandwidth (not a target: copies) of gpumem, gpumem with the recorder
#         off, host-staged sock and NCCL's Socket in the same call; the
#         recorder on/off ratio (>= 0.99)
#
# Knobs: STEP1_MAX (1G), STEPS (DDP steps, 100), ROUNDS (bandwidth rounds, 2),
# BW_OPS (all_reduce).
# Output under $OUT (default build/gpu-out): gpumem.log, summary.md,
# gpumem-logs.tar.gz (every run: stdout, NCCL logs, recorders, reader output).
# Exit: 0 when every step passed, 1 otherwise (summary.md says which).
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
W=$OUTDIR/gm-runs
PARTS=${PARTS:-a b}
STEP1_MAX=${STEP1_MAX:-1G}
STEPS=${STEPS:-100}
ROUNDS=${ROUNDS:-2}
BW_OPS=${BW_OPS:-all_reduce}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$W"
exec > >(tee -a "$OUTDIR/gpumem.log") 2>&1

START=$(date +%s)
declare -a RESULTS=()
FAILED=0
. tests/gpu/runlib.sh
. tests/gpu/build.sh env
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
TOOL=$ROOT/build/default/gdrtrace
REGCOUNT=$ROOT/build/gpu/libnccl-net-regcount.so
JUDGE="python3 tests/gpu/gpumem_judge.py"
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
unset NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_DISABLE
unset NCCL_NET_GDR_LEVEL NCCL_DMABUF_ENABLE GDRTRACE_REG GDRTRACE_ALLOW_PEERMEM GDRTRACE_GPUMEM
unset GDRTRACE_GPUMEM_PEERMEM GDRTRACE_GPUMEM_FORCE_FLUSH GDRTRACE_GPUMEM_DMABUF_ERRNO

echo "== gpumem.sh PARTS='$PARTS' on $(hostname), $(date -u)"
{
    nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
    head -1 /proc/driver/nvidia/version
    ls /sys/class/infiniband 2>&1 | head -3
    grep -h NCCL_VERSION_CODE /usr/include/nccl.h | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
} 2>&1 | tee "$W/environment.txt"

echo "== build"
bash tests/gpu/build.sh > "$W/build.log" 2>&1
rc=$?
tail -3 "$W/build.log"
step "build: plugin, gdrtrace, nccl_check, regcount" $rc
if [ $rc -ne 0 ]; then
    printf '%s\n' "${RESULTS[@]}" > "$OUTDIR/summary.md"
    exit 1
fi

# summary.md, rewritten after every step: a call cut short by the device's
# time limit still brings back what was judged so far.
write_summary() {
    {
        echo "# gpumem.sh (issue 20) PARTS='$PARTS' on $(hostname) — $(date -u +%Y-%m-%dT%H:%MZ), $(($(date +%s) - START)) s"
        echo
        echo '```'
        cat "$W/environment.txt"
        echo '```'
        echo
        printf -- '- %s\n' "${RESULTS[@]}"
        for f in s0 s1 s1f s2 s3a s3b s4 s1-torch; do
            [ -f "$W/$f/judge.txt" ] || continue
            echo
            echo "## $f: $(head -1 "$W/$f/command.txt" | cut -c1-300)"
            echo '```'
            cat "$W/$f/judge.txt"
            echo '```'
            echo '```'
            cat "$W/$f/verdict.txt" 2>/dev/null
            echo '```'
        done
        for f in ddp-judge.txt bw-judge.txt; do
            [ -f "$W/$f" ] || continue
            echo
            echo "## $f"
            echo '```'
            cat "$W/$f"
            echo '```'
        done
    } > "$OUTDIR/summary.md"
}
# gstep NAME STATUS: step (runlib.sh), then the summary so far.
gstep() {
    step "$@"
    write_summary
}

# gm DIR [VAR=V ...]: the environment of a gpumem run under the regcount
# witness (NCCL -> regcount -> gdrtrace), recorders in DIR/rec.
gm() {
    local d=$1
    shift
    echo "NCCL_NET_PLUGIN=$REGCOUNT GT_REGCOUNT_INNER=$PLUGIN GT_REGCOUNT_DIR=$d/regcount" \
        "GDRTRACE_DIR=$d/rec GDRTRACE_GPUMEM=1 $*"
}
# judge N DIR [ARGS]: gpumem_judge.py step N on DIR, its output kept.
judge() {
    local n=$1 d=$2
    shift 2
    $JUDGE step "$n" "$d" --tool "$TOOL" "$@" > "$d/judge.txt" 2>&1
    local rc=$?
    grep -E '^  (ok|FAIL|NCCL:)|^(PASS|FAIL)' "$d/judge.txt" | head -40
    return $rc
}
# Step 1's kernel corroboration: `gdrtrace summary` while the job runs, until
# the kernel lists nv_dmabuf objects (or the job ends).  Each try leaves one
# line in kcorr-tries.txt; when none succeeds, kcorr.txt is the last try that
# saw a live recorder (its section says why: bufinfo not readable, 0 objects),
# not the try after the job ended, which has no kernel section at all.
kcorr_watch() {
    local d=$1 pid=$2
    mkdir -p "$d" # the job started in the background may not have made it yet
    : > "$d/kcorr-tries.txt"
    while kill -0 "$pid" 2>/dev/null; do
        sleep 2
        ls "$d/rec"/*.rec >/dev/null 2>&1 || continue
        "$TOOL" summary --no-bars "$d/rec" > "$d/kcorr-try.txt" 2>&1
        echo "$(date +%T) $(grep -E -m1 'kernel: |not readable: ' "$d/kcorr-try.txt" ||
            echo 'no kernel section (no live recorder)')" >> "$d/kcorr-tries.txt"
        grep -q '== kernel corroboration' "$d/kcorr-try.txt" && cp "$d/kcorr-try.txt" "$d/kcorr-live.txt"
        if grep -Eq 'exported by nv_dmabuf' "$d/kcorr-try.txt" &&
           ! grep -Eq ' 0 exported by nv_dmabuf' "$d/kcorr-try.txt"; then
            cp "$d/kcorr-try.txt" "$d/kcorr.txt"
            return 0
        fi
    done
    if [ -f "$d/kcorr-live.txt" ]; then
        cp "$d/kcorr-live.txt" "$d/kcorr.txt"
    else
        cp "$d/kcorr-try.txt" "$d/kcorr.txt" 2>/dev/null
    fi
    return 1
}
# The kernel's dma-buf list is in debugfs, which a VM may not mount.
BUFINFO=${GDRTRACE_BUFINFO:-/sys/kernel/debug/dma_buf/bufinfo}
if ! [ -r "$BUFINFO" ] && [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/kernel/debug 2>/dev/null; then
    mount -t debugfs debugfs /sys/kernel/debug 2>&1 | sed 's/^/  debugfs: /'
fi
if [ -r "$BUFINFO" ]; then
    echo "  $BUFINFO readable"
else
    echo "  $BUFINFO not readable: step 1's kernel corroboration will fail"
fi

if part a; then
echo "== a. NCCL 2.28.3, nccl_check"
d=$W/s0
run_env "$d" 90 info "$(gm "$d")" build/gpu/nccl_check -b 8 -e 16M -f 8
judge 0 "$d"
gstep "0. mode on, no NCCL_NET_GDR_LEVEL: NCCL keeps GPU Direct off -> HOST-STAGED (emulated)" $?

d=$W/s1
run_env "$d" 270 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS)" build/gpu/nccl_check -b 8 -e "$STEP1_MAX" -f 4 &
job=$!
kcorr_watch "$d" "$job"
wait "$job"
judge 1 "$d" --max-bytes "$(numfmt --from=iec "$STEP1_MAX")"
gstep "1. NCCL_NET_GDR_LEVEL=SYS: /GDRDMA, regMrDmaBuf nv_dmabuf, 8 B..$STEP1_MAX correct, DIRECT-DMABUF (emulated)" $?

# The copies run in the copier process (the layer's one copy mode): its
# INFO line in NCCL's log says so.
n=$(cat "$W/s1"/nccl.*.log 2>/dev/null | grep -c 'copies run in the copier process')
gstep "1p. the copies ran in the copier process (NCCL's log: $n line(s), one per rank)" $((n < 2))

d=$W/s1c
run_env "$d" 90 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS NCCL_CUMEM_ENABLE=0)" \
    build/gpu/nccl_check -b 8 -e 16M -f 8
judge 1 "$d" --max-bytes $((16 << 20)) --no-kcorr
gstep "1c. NCCL_CUMEM_ENABLE=0: cudaMalloc buffers, imported by CUDA IPC in the copier, correct" $?

d=$W/s1f
run_env "$d" 90 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS GDRTRACE_GPUMEM_FORCE_FLUSH=1)" \
    build/gpu/nccl_check -b 8 -e 16M -f 8
judge 1 "$d" --max-bytes $((16 << 20)) --force-flush --no-kcorr
gstep "1f. the same with forceFlush=1: NCCL flushes, results correct" $?

d=$W/s2
run_env "$d" 90 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS GDRTRACE_REG=peermem GDRTRACE_GPUMEM_PEERMEM=1)" \
    build/gpu/nccl_check -b 8 -e 16M -f 8
judge 2 "$d"
gstep "2. GDRTRACE_REG=peermem (emulated present): regMr(CUDA) -> DIRECT-PEERMEM (emulated)" $?

d=$W/s3a
run_env "$d" 90 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS GDRTRACE_GPUMEM_DMABUF_ERRNO=5 \
    GDRTRACE_ALLOW_PEERMEM=1 GDRTRACE_GPUMEM_PEERMEM=1)" build/gpu/nccl_check -b 8 -e 16M -f 8
judge 3a "$d"
gstep "3a. DMA-BUF import fails (EIO), peermem allowed -> FALLBACK with reason and errno" $?

d=$W/s3b
run_env "$d" 75 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS GDRTRACE_GPUMEM_DMABUF_ERRNO=5)" \
    build/gpu/nccl_check -b 8 -e 1M -f 8
judge 3b "$d"
gstep "3b. DMA-BUF import fails, no fallback -> NCCL fails cleanly, ERROR quotes the reason" $?

d=$W/s4
run_env "$d" 90 info "$(gm "$d" NCCL_NET_GDR_LEVEL=LOC)" build/gpu/nccl_check -b 8 -e 16M -f 8
judge 4 "$d"
gstep "4. NCCL_NET_GDR_LEVEL=LOC: GPU memory offered, NCCL declines -> HOST-STAGED (emulated)" $?
fi

if part b; then
TNCCL=$(torch_nccl_dir)
TVER=$(python3 -c 'import torch; v = torch.cuda.nccl.version(); print(v[0] * 10000 + v[1] * 100 + v[2] if isinstance(v, tuple) else v)' 2>/dev/null)
echo "== b. PyTorch's NCCL ($TVER, ${TNCCL:-not found})"
if [ -z "$TNCCL" ] || [ ! -e "$TNCCL/libnccl.so.2" ]; then
    gstep "PyTorch's libnccl.so.2 was not found" 1
else
    d=$W/s1-torch
    LD_LIBRARY_PATH="$TNCCL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        run_env "$d" 150 info "$(gm "$d" NCCL_NET_GDR_LEVEL=SYS)" build/gpu/nccl_check -b 8 -e 64M -f 8
    judge 1 "$d" --max-bytes $((64 << 20)) --nccl-version "$TVER" --no-kcorr
    gstep "1'. on NCCL $TVER: GPU Direct on, regMrDmaBuf, DIRECT-DMABUF (emulated), correct" $?
fi

echo "== 5. DDP A/B: DMA-BUF vs peermem (emulated), NCCL's Socket, $STEPS steps"
for cfg in dmabuf peermem socket; do
    d=$W/torch-$cfg
    case $cfg in
    # Both plugin runs have (emulated) peermem present, as both sides of an A/B
    # on one ib machine would: they differ in GDRTRACE_REG alone.
    dmabuf) vars="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$d/rec GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS GDRTRACE_GPUMEM_PEERMEM=1" ;;
    peermem) vars="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$d/rec GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS GDRTRACE_REG=peermem GDRTRACE_GPUMEM_PEERMEM=1" ;;
    socket) vars="NCCL_NET_PLUGIN=none NCCL_NET=Socket" ;;
    esac
    run_env "$d" 170 info "$vars" python3 tests/gpu/train_ddp.py run --out "$d/losses" \
        --steps "$STEPS" --timeout 160
    echo "torch-$cfg: exit $(cat "$d/rc"); $(tail -1 "$d/stdout.txt")"
done
$JUDGE ddp "$W" --tool "$TOOL" > "$W/ddp-judge.txt" 2>&1
rc=$?
grep -E '^  (ok|FAIL)|^(PASS|FAIL)' "$W/ddp-judge.txt"
gstep "5. DDP: DMA-BUF vs peermem (emulated) bit-equal to Socket; diff: only the registration path" $rc

echo "== 6. bandwidth ($BW_OPS, 128 MiB .. 1 GiB, $ROUNDS rounds, interleaved)"
for r in $(seq 1 "$ROUNDS"); do
    for cfg in gpumem gpumem-norec sock socket; do
        d=$W/bw-$cfg-r$r
        case $cfg in
        gpumem) vars="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$d/rec GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" ;;
        gpumem-norec) vars="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DISABLE=1 GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=SYS" ;;
        sock) vars="NCCL_NET_PLUGIN=$PLUGIN GDRTRACE_DIR=$d/rec" ;;
        socket) vars="NCCL_NET_PLUGIN=none NCCL_NET=Socket" ;;
        esac
        run_env "$d" 120 warn "$vars" build/gpu/nccl_check -b 128M -e 1G -f 2 -o "$BW_OPS" ||
            echo "bw-$cfg-r$r failed ($(cat "$d/rc")): $(tail -2 "$d/stderr.txt")"
    done
done
$JUDGE bw "$W" > "$W/bw-judge.txt" 2>&1
rc=$?
cat "$W/bw-judge.txt"
gstep "6. bandwidth beside sock and Socket; recorder on/off >= 0.99 (gpumem)" $rc
fi

echo "== summary"
write_summary
printf '%s\n' "${RESULTS[@]}"
# Recorders and NCCL logs, without the bulky per-size stdout of the sweeps.
tar czf "$OUTDIR/gpumem-logs-${PARTS// /}.tar.gz" -C "$OUTDIR" gm-runs 2>/dev/null
rm -rf "$W"
echo "total $(($(date +%s) - START)) s; $([ $FAILED -eq 0 ] && echo PASS || echo FAIL)"
exit $FAILED
