#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-trust.sh — the reader's trust boundaries (docs/security.md): what it
# is given to read that is not a regular file, and what another local user
# planted (its recorders and logs, a junk file in a shared folder).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/job"
$FX host "$T/job/gdrtrace.J.node-a.1001.rec" --job J --host node-a --pid 1001 --rank 0

# ---- an input that is not a regular file: refused by name, never waited on
mkfifo "$T/fifo"
for p in "$T/fifo" /dev/zero; do
    timeout 20 $G verdict --nccl-log "$p" "$T/job" >"$T/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "$p: cannot read NCCL log: not a regular file" "$T/out" &&
        pass "verdict --nccl-log $p: refused with its name (exit 2)" ||
        fail "verdict --nccl-log $p: exit $rc (124: it hung), $(head -n 3 "$T/out")"
done
timeout 20 $G doctor --compare "$T/fifo" >"$T/out" 2>&1
rc=$?
[ $rc -ne 124 ] && grep -q "$T/fifo is not a regular file" "$T/out" &&
    pass "doctor --compare FIFO: refused with its name" ||
    fail "doctor --compare FIFO: exit $rc (124: it hung), $(head -n 3 "$T/out")"
timeout 20 $G verdict "$T/fifo" >"$T/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "not a regular file" "$T/out" && pass "verdict FIFO: refused with its name" ||
    fail "verdict FIFO: exit $rc, $(head -n 3 "$T/out")"

finish "the reader's trust boundaries hold"
