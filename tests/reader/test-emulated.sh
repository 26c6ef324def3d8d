#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-emulated.sh — runs of the GPU-memory validation mode (GDRTRACE_GPUMEM=1,
# plugin/gpumem) never pass for GPUDirect RDMA:
#  * fixture recorders with the setting GDRTRACE_GPUMEM=1: every reader output
#    (verdict text and JSON, summary text and JSON, Prometheus, diff) labels
#    the verdict "(emulated: no NIC; GPU memory moved by CUDA copies)";
#  * `verdict --expect dmabuf|peermem` exits 21 on them, 0 with
#    --allow-emulated; --expect host is unaffected; a mismatch stays 20;
#  * the same recorders without the setting carry no such label;
#  * end to end: the NCCL-like harness through the real plugin with
#    GDRTRACE_GPUMEM=1 writes recorders the reader marks emulated (no GPU
#    here, so HOST-STAGED/ERROR/NO-DATA, each labelled).
. "$(dirname "$0")/lib.sh"
EMU='(emulated: no NIC; GPU memory moved by CUDA copies)'

for k in dmabuf peermem host fallback error; do
    mkdir -p "$T/emu-$k" "$T/real-$k"
    $FX "$k" "$T/emu-$k/gdrtrace.job42.node-a.4242.rec" --setting GDRTRACE_GPUMEM=1 ||
        fail "fixture emu-$k"
    $FX "$k" "$T/real-$k/gdrtrace.job42.node-a.4242.rec" || fail "fixture real-$k"
done

out=$($G verdict "$T/emu-dmabuf"); rc=$?
if [ $rc = 0 ] && grep "^all " <<<"$out" | grep -qF " DIRECT-DMABUF $EMU " &&
   grep "^comm 0x1234abcd5678ef00 " <<<"$out" | grep -qF " DIRECT-DMABUF $EMU "; then
    pass "verdict: DIRECT-DMABUF $EMU"
else
    fail "verdict emulated dmabuf: exit $rc: $out"
fi
for k in dmabuf peermem; do
    out=$($G verdict --expect "$k" "$T/emu-$k"); rc=$?
    [ $rc = 21 ] && grep -q "met only by the GPU-memory validation mode" <<<"$out" &&
        pass "--expect $k on an emulated run: exit 21" || fail "--expect $k emulated: exit $rc: $out"
    $G verdict --expect "$k" --allow-emulated "$T/emu-$k" >/dev/null; rc=$?
    [ $rc = 0 ] && pass "--expect $k --allow-emulated: exit 0" || fail "--allow-emulated $k: exit $rc"
    $G verdict --expect "$k" "$T/real-$k" >/dev/null; rc=$?
    [ $rc = 0 ] && pass "--expect $k on a real run: exit 0" || fail "--expect $k real: exit $rc"
done
$G verdict --expect host "$T/emu-host" >/dev/null; rc=$?
[ $rc = 0 ] && pass "--expect host on an emulated host run: exit 0" || fail "--expect host emu: $rc"
$G verdict --expect dmabuf "$T/emu-fallback" >/dev/null; rc=$?
[ $rc = 20 ] && pass "--expect dmabuf on an emulated FALLBACK: exit 20" || fail "mismatch emu: $rc"
out=$($G verdict --expect dmabuf --json "$T/emu-dmabuf"); rc=$?
if [ $rc = 21 ] && grep -qF "DIRECT-DMABUF $EMU" <<<"$out" &&
   grep -q '"expect_met": *false' <<<"$out" && grep -q '"emulated"' <<<"$out"; then
    pass "verdict --json: label, emulated, expect_met false, exit 21"
else
    fail "verdict --json emulated: exit $rc: $out"
fi
for k in fallback error; do
    out=$($G verdict "$T/emu-$k")
    grep -qF "$EMU" <<<"$out" && pass "verdict $k labelled" || fail "verdict $k: $out"
done

out=$($G summary --full "$T/emu-dmabuf")
grep -qF "DIRECT-DMABUF $EMU" <<<"$out" && grep -q "GDRTRACE_GPUMEM=1" <<<"$out" &&
    pass "summary: label and the setting" || fail "summary emulated: $out"
out=$($G summary --json "$T/emu-dmabuf")
grep -qF "DIRECT-DMABUF $EMU" <<<"$out" && grep -q '"emulated"' <<<"$out" &&
    pass "summary --json: label and emulated" || fail "summary --json emulated: $out"
out=$($G export --prometheus --exited-within 1000w "$T/emu-dmabuf")
grep -F 'gdrtrace_job_verdict' <<<"$out" | grep -qF "verdict=\"DIRECT-DMABUF $EMU\"" &&
    pass "export --prometheus: label" || fail "export emulated: $(grep verdict <<<"$out")"
out=$($G diff "$T/emu-dmabuf" "$T/emu-peermem")
grep -qF "verdict DIRECT-DMABUF $EMU" <<<"$out" && grep -qF "verdict DIRECT-PEERMEM $EMU" <<<"$out" &&
    pass "diff: both sides labelled" || fail "diff emulated: $out"

out=$($G verdict "$T/real-dmabuf"; $G summary "$T/real-dmabuf"; $G export --prometheus --exited-within 1000w "$T/real-dmabuf")
! grep -qi "emulated" <<<"$out" && pass "a real run carries no emulated label" ||
    fail "real run labelled: $(grep -i emulated <<<"$out")"

# Format 1.8: the writer records emulated as a code (identity.emulated and
# its facts bit), and the reader takes it over the strings: emulated with a
# transport "ib" and no GDRTRACE_GPUMEM setting; not emulated where the code
# says 0 though the setting says 1.  A 1.7 file's facts bytes mean nothing:
# the string rules decide.
N=gdrtrace.job42.node-a.4242.rec
mkdir -p "$T/c18-emu" "$T/c18-real" "$T/c17"
$FX dmabuf "$T/c18-emu/$N" --emulated-code 1 || fail "fixture 1.8 emulated"
$FX dmabuf "$T/c18-real/$N" --emulated-code 0 --setting GDRTRACE_GPUMEM=1 || fail "fixture 1.8 real"
$FX dmabuf "$T/c17/$N" --emulated-code 1 --minor 7 || fail "fixture 1.7 with the byte set"
out=$($G verdict --expect dmabuf "$T/c18-emu"); rc=$?
if [ $rc = 21 ] && grep "^all " <<<"$out" | grep -qF " DIRECT-DMABUF $EMU " &&
   ! grep -qi "gpumem" <<<"$($G summary --full "$T/c18-emu")"; then
    pass "1.8 emulated code, transport ib, no setting: emulated, --expect exit 21"
else
    fail "1.8 emulated code: exit $rc: $out"
fi
out=$($G verdict --expect dmabuf "$T/c18-real"); rc=$?
[ $rc = 0 ] && ! grep -qi "emulated" <<<"$out" &&
    pass "1.8 emulated code 0 wins over the setting GDRTRACE_GPUMEM=1" ||
    fail "1.8 code 0: exit $rc: $out"
out=$($G verdict --expect dmabuf "$T/c17"); rc=$?
[ $rc = 0 ] && ! grep -qi "emulated" <<<"$out" &&
    pass "a 1.7 file's emulated byte is ignored: the string rules decide" ||
    fail "1.7 with the byte: exit $rc: $out"

# End to end through the plugin and its recorder (host memory only here).
if [ -x "$BUILD/harness/harness" ]; then
    mkdir -p "$T/e2e"
    if GDRTRACE_GPUMEM=1 GDRTRACE_DIR=$T/e2e "$BUILD/harness/harness" --abi 11 >"$T/e2e.log" 2>&1; then
        out=$($G verdict "$T/e2e")
        n=$(grep -c "^comm " <<<"$out")
        m=$(grep -cF "$EMU" <<<"$out")
        s=$($G summary --full "$T/e2e")
        if [ "$n" -ge 1 ] && [ "$m" -ge "$n" ] && grep -q "transport sock+gpumem" <<<"$s" &&
           grep -q "GDRTRACE_GPUMEM=1 \[gdrtrace\]" <<<"$s"; then
            pass "harness with GDRTRACE_GPUMEM=1: $n communicator(s), every verdict emulated"
        else
            fail "harness e2e: $out"
        fi
    else
        fail "harness with GDRTRACE_GPUMEM=1 failed: $(tail -5 "$T/e2e.log")"
    fi
fi

# The emulated label (66 columns) must not push the evidence into a strip at
# the right: continuation lines come back to the evidence column (42), as
# after a 15-column label, and nothing passes 100 columns.
out=$($G verdict "$T/emu-fallback")
cont=$(awk '/^comm /{c=1; next} /^[a-z]/{c=0} c' <<<"$out")
if [ -n "$cont" ] && ! grep -vqE '^ {42}[^ ]' <<<"$cont" && ! grep -qE '^.{101}' <<<"$out"; then
    pass "verdict: an emulated label's evidence wraps back to column 42, lines <= 100"
else
    fail "verdict emulated wrap: $out"
fi
# summary --nccl-log printed its "all" line through a 64-byte buffer: the
# emulated label was cut ("DIRECT-DMABUF (emulated: no NIC; GPU 1").
D=$(dirname "$0")/nccl-logs/real-2.28.3-c-gm-sys
out=$($G summary --nccl-log "$D" "$D/recorders.zst")
if grep -E '^all ' <<<"$out" | grep -qF "DIRECT-DMABUF $EMU 1"; then
    pass "summary --nccl-log: the emulated label of the all line is whole"
else
    fail "summary --nccl-log all line: $(grep -E '^all ' <<<"$out")"
fi

finish "test-emulated: all passed"
