#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-gpumem-judge.sh — tests/gpu/gpumem_judge.py (the judging half of
# tests/gpu/gpumem.sh, which only runs on the GPU machine) on canned runs:
# NCCL logs in NCCL's own line format, nccl_check output, regcount counts and
# fixture recorders (tests/reader) with and without GDRTRACE_GPUMEM=1.  Each
# case says which of the judge's checks must pass and which must fail, so a
# judge that passes everything (or nothing) fails here.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
FX=$BUILD/tests/reader_fixture
J="python3 tests/gpu/gpumem_judge.py"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
CID=0x1234abcd5678ef00

# canned DIR KIND EMU(0|1) GDR(Enabled|Disabled) DIST GDRDMA(0|1) RC [extra NCCL lines]
canned() {
    local d=$1 kind=$2 emu=$3 gdr=$4 dist=$5 gdrdma=$6 rc=$7
    shift 7
    mkdir -p "$d/rec" "$d/regcount"
    echo "$rc" > "$d/rc"
    echo "NCCL_NET_PLUGIN=x GDRTRACE_GPUMEM=1 NCCL_NET_GDR_LEVEL=LOC nccl_check" > "$d/command.txt"
    local set=()
    [ "$emu" = 1 ] && set=(--setting GDRTRACE_GPUMEM=1)
    # shellcheck disable=SC2086 # FXARGS: more fixture options, word-split
    "$FX" "$kind" "$d/rec/gdrtrace.job42.node-a.4242.rec" "${set[@]}" ${FXARGS:-} || fail "fixture $kind"
    for pid in 4242 4243; do
        {
            echo "gpu:$pid:$pid [0] NCCL INFO NCCL version 2.28.3+cuda13.0"
            echo "gpu:$pid:$pid [0] NCCL INFO Assigned NET plugin gdrtrace to comm"
            echo "gpu:$pid:$pid [0] NCCL INFO ncclCommInitRankConfig comm 0x55d0 rank $((pid - 4242)) nranks 2 cudaDev 0 nvmlDev 0 busId 6000 commId $CID - Init START"
            # NCCL's per-NIC line (src/graph/topo.cc) says Enabled whenever the plugin
            # offers GPU memory, whatever the per-GPU decision after it (the GPU run)
            echo "gpu:$pid:$pid [0] NCCL INFO NET/gdrtrace : GPU Direct RDMA Enabled for HCA 0 'eth0'"
            echo "gpu:$pid:$pid [0] NCCL INFO GPU Direct RDMA $gdr for GPU 0 / HCA 0 ($dist)"
            echo "gpu:$pid:$pid [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/gdrtrace/0$([ "$gdrdma" = 1 ] && echo /GDRDMA)"
            echo "gpu:$pid:$pid [0] NCCL INFO ncclCommInitRankConfig comm 0x55d0 rank $((pid - 4242)) nranks 2 cudaDev 0 nvmlDev 0 busId 6000 commId $CID - Init COMPLETE"
            for l in "$@"; do echo "gpu:$pid:$pid [0] NCCL $l"; done
        } > "$d/nccl.gpu.$pid.log"
    done
    {
        echo "# nccl_version=22803"
        for op in all_reduce all_gather reduce_scatter broadcast sendrecv; do
            for b in 8 1024 1048576 1073741824; do
                echo "RESULT op=$op bytes=$b iters=5 time_us=10 algbw_GBps=1.0 busbw_GBps=1.0 errors=0 check=OK"
            done
        done
        [ "$rc" = 0 ] && echo "PASS: every result of every rank matched"
    } > "$d/stdout.txt"
    # the witness saw what the recorder counted
    "$G" summary --json "$d/rec" | python3 -c '
import json, sys
sys.path.insert(0, "tests/gpu")
import gpucheck
for c in json.load(sys.stdin).get("communicators", []):
    r = gpucheck.reader_regs(c)
    print("comm %s reg_host %d reg_cuda %d reg_dmabuf %d reg_failed %d dereg %d"
          % (c["comm"], r["host"], r["cuda"], r["dmabuf"], r["failed"], r["dereg"]))
' > "$d/regcount/regcount.4242.txt"
}

# expect NAME STEP DIR WANT_RC "ok-pattern ..." "FAIL-pattern ..." [judge args]
expect() {
    local name=$1 n=$2 d=$3 want=$4 oks=$5 bads=$6
    shift 6
    $J step "$n" "$d" --tool "$G" "$@" > "$d/judge.out" 2>&1
    local rc=$? bad=0 p
    IFS='|' read -ra P <<<"$oks"
    for p in "${P[@]}"; do [ -z "$p" ] || grep -q "^  ok   .*$p" "$d/judge.out" || { bad=1; echo "  missing ok: $p"; }; done
    IFS='|' read -ra P <<<"$bads"
    for p in "${P[@]}"; do [ -z "$p" ] || grep -q "^  FAIL .*$p" "$d/judge.out" || { bad=1; echo "  missing FAIL: $p"; }; done
    local nfail
    nfail=$(grep -c '^  FAIL' "$d/judge.out")
    if [ "$rc" = "$want" ] && [ $bad = 0 ]; then
        pass "$name (judge exit $rc, $nfail FAIL line(s))"
    else
        fail "$name: judge exit $rc (want $want)"
        sed 's/^/    /' "$d/judge.out"
    fi
}

canned "$T/s0" host 1 Disabled "distance 8 > 5" 0 0
expect "step 0 on a canned emulated host-staged run" 0 "$T/s0" 1 \
    "NCCL saw GPU memory offered (2 line(s)): NET/gdrtrace : GPU Direct RDMA Enabled for HCA 0 'eth0'|NCCL kept GPU Direct off (2 line(s), all Disabled)|topology decided: GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 8 > 5)|no channel line ends in /GDRDMA|commIds|verdict: HOST-STAGED (emulated" \
    "names NCCL's decision"
grep -q "NCCL: GPU Direct RDMA Disabled for GPU 0 / HCA 0 (distance 8 > 5)" "$T/s0/judge.out" &&
    pass "step 0 quotes NCCL's own line" || fail "step 0 quote: $(cat "$T/s0/judge.out")"

canned "$T/s0real" host 0 Disabled "distance 8 > 5" 0 0
expect "step 0 on a run without the mode: the label is missing" 0 "$T/s0real" 1 \
    "NCCL kept GPU Direct off" "verdict: HOST-STAGED (want HOST-STAGED (emulated"

canned "$T/s1" dmabuf 1 Enabled "distance 8 <= 9), read 1 mode Default" 1 0
printf '%s\n' "== kernel corroboration (/sys/kernel/debug/dma_buf/bufinfo, read now)" \
    "   2 live recorder(s) on this host: 8 DMA-BUF registration(s) recorded, 0 deregistration(s) of any kind" \
    "   kernel: 5 dma-buf object(s), 3 exported by nv_dmabuf (12.0 MiB)" \
    "   NIC eth0         virtio2        nv_dmabuf objects attached: 0" > "$T/s1/kcorr.txt"
expect "step 1 on a canned emulated DMA-BUF run" 1 "$T/s1" 0 \
    "NCCL enabled GPU Direct|via NET/gdrtrace/…/GDRDMA|verdict: DIRECT-DMABUF (emulated|exits 21 (21: emulated), with --allow-emulated 0|3 nv_dmabuf object|attached to no device|all_reduce: every size from 8 to 1073741824" ""
# the kernel section while the job ran, on a machine without debugfs
sed -i 's/^   kernel: .*/   not readable: No such file or directory (debugfs must be mounted and readable, usually root)/' "$T/s1/kcorr.txt"
sed -i '/nv_dmabuf objects attached/d' "$T/s1/kcorr.txt"
expect "step 1 when bufinfo was not readable" 1 "$T/s1" 1 "NCCL enabled GPU Direct" \
    "kernel corroboration while the job ran: no kernel line: bufinfo not readable (No such file"

# forceFlush: NCCL's iflush calls are the recorder's traffic.flushes (the GPU run: 5922)
FXARGS="--flushes 2961" canned "$T/s1f" dmabuf 1 Enabled "distance 8 <= 9), read 1 mode Default" 1 0
expect "step 1f: NCCL flushed (forceFlush=1)" 1 "$T/s1f" 0 \
    "NCCL flushed GPU receives (2961 iflush)|verdict: DIRECT-DMABUF (emulated" "" --force-flush --no-kcorr
canned "$T/s1f0" dmabuf 1 Enabled "distance 8 <= 9), read 1 mode Default" 1 0
expect "step 1f: forceFlush=1 but NCCL never flushed" 1 "$T/s1f0" 1 "" \
    "NCCL flushed GPU receives (0 iflush)" --force-flush --no-kcorr

canned "$T/s1off" dmabuf 1 Disabled "distance 8 > 5" 0 0
expect "step 1 when NCCL kept GPU Direct off" 1 "$T/s1off" 1 "" \
    "NCCL enabled GPU Direct|GDRDMA|kernel corroboration"
canned "$T/s1real" dmabuf 0 Enabled "distance 8 <= 9)" 1 0
expect "step 1 on a real (not emulated) DMA-BUF run" 1 "$T/s1real" 1 "NCCL enabled GPU Direct" \
    "verdict: DIRECT-DMABUF (want|exits 0 (21: emulated)"

canned "$T/s2" peermem 1 Enabled "distance 8 <= 9)" 1 0
expect "step 2 on a canned emulated peermem run" 2 "$T/s2" 0 \
    "verdict: DIRECT-PEERMEM (emulated|exit 10" ""
canned "$T/s3a" fallback 1 Enabled "distance 8 <= 9)" 1 0
# the fixture's fallbacks carry errno 22, not the switch's 5: that check must fail
expect "step 3a on a canned emulated fallback run" 3a "$T/s3a" 1 \
    "verdict: FALLBACK (emulated|exit 13" "reason (dmabuf-reg-failed) and errno 5"
canned "$T/s3b" error 1 Enabled "distance 8 <= 9)" 0 1
# NCCL 2.28 writes WARN lines with a timestamp and file:line (src/debug.cc); the GPU run's:
for pid in 4242 4243; do
    echo "[2026-12-03 11:13:54] gpu:$pid:2047 [0] plugin/reg/gt_reg.c:500 NCCL WARN NET/gdrtrace : gpumem:eth0: DMA-BUF registration of GPU buffer 0x7f2c8a000000 size 4915200 failed (gpumem dma-buf import(fd 65, offset 0) failed: Input/output error (GDRTRACE_GPUMEM_DMABUF_ERRNO=5, a test switch); errno 5) and the peermem fallback is not allowed (GDRTRACE_ALLOW_PEERMEM=1 allows it)" >> "$T/s3b/nccl.gpu.$pid.log"
done
# the fixture's error is peermem-not-allowed on ib, not the switch: not quoted
expect "step 3b on a canned failed run" 3b "$T/s3b" 1 \
    "no hang|carries our error|verdict ERROR (emulated" "the verdict quotes the reason"
echo 124 > "$T/s3b/rc"
expect "step 3b when the run hung" 3b "$T/s3b" 1 "" "no hang"

# step 5: three DDP runs (bit-equal losses) and the diff of the two plugin runs
D=$T/ddp
for cfg in dmabuf peermem socket; do
    mkdir -p "$D/torch-$cfg/rec"
    echo 0 > "$D/torch-$cfg/rc"
    python3 -c 'import json, sys
json.dump({"nccl": "2.28.9", "step_ms": 5.0,
           "losses_hex": [float(6.0 - i * 0.05).hex() for i in range(100)]}, open(sys.argv[1], "w"))' \
        "$D/torch-$cfg/losses.rank0.json"
done
"$FX" dmabuf "$D/torch-dmabuf/rec/gdrtrace.job42.node-a.1.rec" --pid 1 --reg dmabuf --setting GDRTRACE_GPUMEM=1
"$FX" peermem "$D/torch-peermem/rec/gdrtrace.job42.node-a.2.rec" --pid 2 --reg peermem --setting GDRTRACE_GPUMEM=1
$J ddp "$D" --tool "$G" > "$D/judge.out" 2>&1; rc=$?
if grep -q "^  ok   losses bit-equal" "$D/judge.out" &&
   grep -q "^  ok   torch-dmabuf: all .*DIRECT-DMABUF (emulated" "$D/judge.out" &&
   grep -q "^  ok   torch-peermem: all .*DIRECT-PEERMEM (emulated" "$D/judge.out"; then
    pass "step 5 judge on canned DDP runs (exit $rc: diff $(grep -c '^  FAIL' "$D/judge.out") FAIL)"
else
    fail "step 5 judge: $(cat "$D/judge.out")"
fi
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["losses_hex"][50] = float(1.0).hex(); json.dump(d, open(sys.argv[1], "w"))' \
    "$D/torch-peermem/losses.rank0.json"
$J ddp "$D" --tool "$G" > "$D/judge2.out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "^  FAIL losses bit-equal" "$D/judge2.out" &&
    pass "step 5 judge: a loss that differs fails it" || fail "step 5 differing loss: $(cat "$D/judge2.out")"

# step 6: the bandwidth table and the recorder on/off ratio
B=$T/bw
for cfg in gpumem gpumem-norec sock socket; do
    for r in 1 2; do
        mkdir -p "$B/bw-$cfg-r$r"
        bwv=1.80; [ "$cfg" = gpumem ] && bwv=1.79
        for b in 134217728 1073741824; do
            echo "RESULT op=all_reduce bytes=$b iters=5 time_us=10 algbw_GBps=$bwv busbw_GBps=1 errors=0 check=OK"
        done > "$B/bw-$cfg-r$r/stdout.txt"
    done
done
$J bw "$B" > "$B/judge.out" 2>&1; rc=$?
[ $rc = 0 ] && grep -q "| all_reduce | 128 MiB | 1.790 | 1.800 | 1.800 | 1.800 | 0.994 |" "$B/judge.out" &&
    pass "step 6 judge: table and ratio 0.994 >= 0.99" || fail "step 6 judge (exit $rc): $(cat "$B/judge.out")"

[ $fails = 0 ] && echo "test-gpumem-judge: all passed" && exit 0
echo "test-gpumem-judge: $fails failure(s)"
exit 1
