#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-harness.sh — end to end with the real writer: runs the NCCL-like
# harness (tests/harness, ABI v12, host memory over the sock transport) with
# GDRTRACE_DIR pointing at a fresh folder, then checks that
#  * `gdrtrace verdict` says HOST-STAGED (exit 11) — the truth for this run;
#  * `summary` counts match the harness's calls: 3 regMr(HOST) per process
#    (send arena, receive arena, LL buffer), and each process's completed
#    sends equal the messages the harness says it moved out;
#  * `dump` + `summary` of the archive equals `summary` of the recorders.
# Skips (77) when the harness is not built.
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
H=$BUILD/harness/harness
[ -x "$H" ] || { echo "skip: $H is not built (tests/harness not on this branch)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/rec"
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

if ! timeout 240 "$H" --abi 12 --data-only --iters 10 --max-size 1M --dir "$T/rec" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$T/harness.out" 2>&1; then
    cat "$T/harness.out"; echo "FAIL: the harness itself failed"; exit 1
fi
n=$(ls "$T/rec" | grep -c '\.rec$')
[ "$n" = 2 ] && pass "two recorders written (one per harness process)" || fail "$n recorders in $T/rec"

out=$($G verdict "$T/rec"); rc=$?
if [ $rc = 11 ] && grep -q '^all .*HOST-STAGED' <<<"$out"; then pass "verdict HOST-STAGED, exit 11"
else fail "verdict: exit $rc: $out"; fi

sum=$($G summary --full --no-bars "$T/rec")
nhost=$(grep -Ec '^ +regMr\(HOST\) +0 +0 +3 +0$' <<<"$sum")
[ "$nhost" = 2 ] && pass "summary: 3 regMr(HOST) -> host per process, as the harness registers" ||
    fail "summary registrations: $(grep -A2 'registrations' <<<"$sum")"
want=$(sed -n 's/.*\] moved \([0-9]*\) messages .* out and.*/\1/p' "$T/harness.out" | sort -n | tr '\n' ' ')
got=$(sed '/^== communicators across/q' <<<"$sum" | sed -n 's/^ *traffic *sent \([0-9]*\) .*/\1/p' | grep -v '^0$' | sort -n | tr '\n' ' ')
if [ -n "$want" ] && [ "$want" = "$got" ]; then pass "summary: completed sends per process ($got) = the harness's messages out"
else fail "sends: harness moved [$want], summary says [$got]"; fi

$G dump -o "$T/run.zst" "$T/rec" >/dev/null || fail "dump"
a=$($G summary --full "$T/rec" | grep -v '^   source' | sed '/^ *next: /,$d')
b=$($G summary --full "$T/run.zst" | grep -v '^   source' | sed '/^ *next: /,$d')
[ "$a" = "$b" ] && pass "summary of the archive equals summary of the recorders" ||
    fail "archive differs: $(diff <(echo "$a") <(echo "$b") | head)"

[ $fails = 0 ] && echo "the reader agrees with the harness" || echo "$fails check(s) failed"
[ $fails = 0 ]
