#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-nccl-settings.sh — NCCL's own GPU Direct and transport settings
# (issue 19.2) from the plugin's recorder to every reader output:
#  * end to end, the NCCL-like harness (ABI v12, two processes) through the
#    real plugin, with the GPU-memory validation layer offering GPU memory
#    (GDRTRACE_GPUMEM=1 over tests/harness/fake_cuda.c: a "GPU" that can
#    export DMA-BUF, so ptrSupport is HOST|CUDA|DMABUF without a GPU) while
#    the harness, as NCCL with GPU Direct off, registers host memory only:
#    - NCCL_NET_GDR_LEVEL=LOC in the environment: HOST-STAGED (exit 11) and
#      the verdict names "NCCL_NET_GDR_LEVEL=LOC (from environment)";
#      summary's nccl line and summary --json's settings carry it;
#    - the same value from the file NCCL_CONF_FILE names: "(from PATH)";
#    - nothing set: the verdict says NCCL's topology decided and how to
#      confirm from NCCL's log ("GPU Direct RDMA Disabled for GPU");
#    - diff LOC vs unset: not comparable (exit 1), the setting named; diff
#      LOC (environment) vs LOC (conf file): comparable, same value;
#  * fixtures: NCCL_DMABUF_ENABLE=0 explains regMr(CUDA) under
#    DIRECT-PEERMEM; NCCL_NET_GDR_READ=0 explains host-staged sends beside
#    DMA-BUF receives; diff against a recorder that records no NCCL
#    settings (an older plugin) says so once, loudly.
. "$(dirname "$0")/lib.sh"
H=$BUILD/harness/harness
FAKECUDA=$PWD/$BUILD/tests/libfakecuda.so
[ -x "$H" ] || { echo "skip: $H is not built"; exit 77; }
[ -f "$FAKECUDA" ] || { echo "FAIL: $FAKECUDA is not built (make tests)"; exit 1; }
for v in $(env | grep -oE '^NCCL_[A-Z0-9_]+'); do unset "$v"; done
export HOME=$T # no ~/.nccl.conf of the machine's

run() { # name [VAR=VALUE ...]: the harness with recorders in $T/name
    local name=$1
    shift
    mkdir -p "$T/$name"
    if ! env GDRTRACE_GPUMEM=1 GDRTRACE_CUDA_LIB="$FAKECUDA" GDRTRACE_DIR="$T/$name" "$@" \
        timeout 120 "$H" --abi 12 --data-only --iters 4 --max-size 256K \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$T/$name.log" 2>&1; then
        fail "harness $name: $(tail -3 "$T/$name.log")"
        return 1
    fi
}

run loc NCCL_NET_GDR_LEVEL=LOC
out=$($G verdict "$T/loc"); rc=$?
out=$(unwrap <<<"$out") # the evidence wraps at 100 columns
comm=$(grep '^comm ' <<<"$out" | grep HOST-STAGED)
if [ $rc = 11 ] && grep -q 'ptrSupport HOST|CUDA|DMABUF' <<<"$comm" &&
    grep -qF 'NCCL never asked to register any: NCCL_NET_GDR_LEVEL=LOC (from environment) turns GPU Direct RDMA off' <<<"$comm"; then
    pass "GPU memory offered, host registered: HOST-STAGED (exit 11) names NCCL_NET_GDR_LEVEL=LOC (from environment)"
else
    fail "verdict LOC: exit $rc: $out"
fi
grep -qF 'GPU Direct RDMA Disabled for GPU' <<<"$comm" &&
    pass "the verdict says how to confirm from NCCL's log" || fail "no confirmation: $comm"
sum=$($G summary --full --no-bars "$T/loc")
if grep -qE '^   nccl     NCCL_NET_GDR_LEVEL=LOC \(from environment\)$' <<<"$sum" &&
    grep -qE "other NCCL setting\(s\) deciding GPU Direct and the transport unset" <<<"$sum"; then
    pass "summary: the nccl line shows the setting and its source"
else
    fail "summary nccl line: $(grep -A2 '^   nccl' <<<"$sum")"
fi
js=$($G summary --json "$T/loc" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d["processes"]:
    for e in p["settings"]:
        if e["key"] in ("NCCL_NET_GDR_LEVEL", "NCCL_DMABUF_ENABLE"):
            print("%s=%s [%s] %s" % (e["key"], e["value"], e["source"], e["origin"]))')
if [ "$(grep -c 'NCCL_NET_GDR_LEVEL=LOC \[nccl\] NCCL_NET_GDR_LEVEL=LOC' <<<"$js")" = 2 ] &&
    [ "$(grep -c 'NCCL_DMABUF_ENABLE= \[default\] $' <<<"$js")" = 2 ]; then
    pass "summary --json: each process's settings carry NCCL's, set and unset, with the source"
else
    fail "summary --json settings: $js"
fi

printf '# site\nNCCL_NET_GDR_LEVEL=LOC\n' >"$T/site.conf"
run conf NCCL_CONF_FILE="$T/site.conf"
out=$($G verdict "$T/conf"); rc=$?
out=$(unwrap <<<"$out")
[ $rc = 11 ] && grep -qF "NCCL_NET_GDR_LEVEL=LOC (from $T/site.conf)" <<<"$out" &&
    pass "from NCCL_CONF_FILE: the verdict names the file" || fail "verdict conf: exit $rc: $out"

run topo
out=$($G verdict "$T/topo"); rc=$?
out=$(unwrap <<<"$out")
if [ $rc = 11 ] && grep -qF "no setting explains it (NCCL_NET_GDR_LEVEL unset): NCCL's topology decided" <<<"$out" &&
    grep -qF 'GPU Direct RDMA Disabled for GPU' <<<"$out" && ! grep -q 'NCCL_NET_GDR_LEVEL=' <<<"$out"; then
    pass "nothing set: NCCL's topology decided, and how to confirm"
else
    fail "verdict topo: exit $rc: $out"
fi

out=$($G diff "$T/loc" "$T/topo" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q 'WARNING: A and B differ in more than the registration path' <<<"$out" &&
    grep -qF '!!   NCCL setting NCCL_NET_GDR_LEVEL (decides GPU Direct): A NCCL_NET_GDR_LEVEL=LOC (from environment) vs B NCCL_NET_GDR_LEVEL unset' <<<"$out"; then
    pass "diff: a difference in NCCL_NET_GDR_LEVEL is not the registration path (exit 1, named)"
else
    fail "diff loc topo: exit $rc: $out"
fi
out=$($G diff --json "$T/loc" "$T/topo"); rc=$?
[ $rc = 1 ] && grep -q '"comparable": *false' <<<"$out" && grep -q 'NCCL setting NCCL_NET_GDR_LEVEL' <<<"$out" &&
    pass "diff --json: not comparable, the setting in differences" || fail "diff --json: exit $rc: $out"
out=$($G diff "$T/loc" "$T/conf" 2>&1)
! grep -q 'NCCL setting' <<<"$out" &&
    pass "diff: the same value from the environment and from a conf file is no difference" ||
    fail "diff loc conf: $out"

# Fixtures: the other settings a verdict names, and an older recorder.
mkdir -p "$T/pm" "$T/rd" "$T/old"
$FX peermem "$T/pm/gdrtrace.job42.node-a.4242.rec" --setting NCCL_DMABUF_ENABLE=0 || fail "fixture pm"
$FX dmabuf "$T/rd/gdrtrace.job42.node-a.4242.rec" --setting NCCL_NET_GDR_READ=0 || fail "fixture rd"
$FX dmabuf "$T/old/gdrtrace.job42.node-a.4242.rec" || fail "fixture old"
out=$($G verdict "$T/pm"); rc=$?
out=$(unwrap <<<"$out")
[ $rc = 10 ] && grep -qF 'NCCL_DMABUF_ENABLE=0 (from environment) made NCCL call regMr(NCCL_PTR_CUDA), never regMrDmaBuf' <<<"$out" &&
    pass "DIRECT-PEERMEM: NCCL_DMABUF_ENABLE=0 named as why NCCL asked regMr(CUDA)" ||
    fail "verdict pm: exit $rc: $out"
out=$($G verdict "$T/rd"); rc=$?
out=$(unwrap <<<"$out")
[ $rc = 0 ] && grep -qF 'NCCL_NET_GDR_READ=0 (from environment): NCCL keeps its send buffers in host memory' <<<"$out" &&
    pass "DIRECT-DMABUF: NCCL_NET_GDR_READ=0 explains host-staged sends" || fail "verdict rd: exit $rc: $out"
out=$($G verdict "$T/old" | unwrap)
! grep -q 'NCCL_NET_GDR_READ=0\|NCCL_DMABUF_ENABLE=0' <<<"$out" &&
    pass "no NCCL settings recorded: nothing named" || fail "verdict old names a setting: $out"
out=$($G diff "$T/old" "$T/rd" 2>&1); rc=$?
[ $rc = 1 ] && grep -qF "NCCL settings: B records NCCL's GPU Direct and transport settings, A's recorder" <<<"$out" &&
    [ "$(grep -c 'NCCL setting' <<<"$out")" = 1 ] &&
    pass "diff against an older recorder: said once" || fail "diff old rd: exit $rc: $out"

finish "NCCL's settings are recorded, named by the verdict and compared by diff"
