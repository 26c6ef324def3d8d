#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-demo.sh — `make demo` as a new user meets it:
#   * the build is quiet by default (one short line per target) and V=1
#     prints the command lines;
#   * the demo passes twice in a row with the same DEMO_DIR (it used to fail
#     the second time: old recorders joined the new runs and diff saw two
#     different runs), its recorders are still there after it exits, and the
#     commands it prints to try next work as printed; steps 3-5 show what
#     their headings promise;
#   * a DEMO_DIR that holds something else is refused and left untouched.
set -u
# A parent `make -s` passes -s down through MAKEFLAGS and would hide the very
# command lines V=1 must print: the demo is checked as a user runs it.
unset MAKEFLAGS MFLAGS MAKELEVEL
BUILD=${BUILD:-build/default}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Quiet build: one object into a scratch build folder, both ways.
make --no-print-directory BUILD="$tmp/b" "$tmp/b/obj/common/log.o" >"$tmp/q.log" 2>&1 || bad "quiet build failed: $(cat "$tmp/q.log")"
grep -q "^  CC  *common/log.c$" "$tmp/q.log" && ! grep -q -- "-Werror" "$tmp/q.log" ||
    bad "default build output is not one short line: $(cat "$tmp/q.log")"
make --no-print-directory -B V=1 BUILD="$tmp/b" "$tmp/b/obj/common/log.o" >"$tmp/v.log" 2>&1
grep -q -- "-c common/log.c" "$tmp/v.log" || bad "V=1 does not print the command line: $(cat "$tmp/v.log")"

d=$tmp/demo
for run in 1 2; do
    DEMO_DIR=$d BUILD=$BUILD tests/demo.sh >"$tmp/demo$run.log" 2>&1 ||
        { tail -n 20 "$tmp/demo$run.log"; bad "demo run $run with the same DEMO_DIR failed"; }
done
n=$(ls "$d"/run-a/gdrtrace.*.rec 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || bad "run-a holds $n recorders after the second run, expected 2"
grep -q "Everything is kept in $d" "$tmp/demo2.log" || bad "the demo does not say where its folder is"
tool=$(cd "$BUILD" && pwd)/gdrtrace
cmd=$(grep "^  $tool verdict " "$tmp/demo2.log" | head -n 1)
[ -n "$cmd" ] || bad "the demo prints no '$tool verdict' command to try"
eval "$cmd" >/dev/null
rc=$?
[ $rc -eq 11 ] || bad "the printed '$cmd' exits $rc, expected 11 (HOST-STAGED)"

# step 8 ran the harness through `gdrtrace run`; its printed follow-ups work
cmd=$(grep "^  $tool verdict --nccl-log " "$tmp/demo2.log" | head -n 1)
[ -n "$cmd" ] || bad "the demo prints no 'verdict --nccl-log' command"
out=$(eval "$cmd" 2>&1); rc=$?
[ $rc -eq 11 ] && grep -q "with NCCL's log" <<<"$out" ||
    bad "the printed '$cmd' exits $rc, expected 11 with NCCL's log joined: $out"
cmd=$(grep "^  $tool report -o " "$tmp/demo2.log" | head -n 1)
[ -n "$cmd" ] || bad "the demo prints no 'report -o' command"
eval "$cmd" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && [ -s "$d/job.html" ] || bad "the printed '$cmd' exits $rc or wrote no page"
# a report is of one job: two runs given together would be merged into one;
# two runs are compared with --baseline
grep "^  $tool report -o " "$tmp/demo2.log" | grep -v -- '--baseline' | awk 'NF != 5 { exit 1 }' ||
    bad "a printed report merges several runs into one job: $(grep "^  $tool report -o " "$tmp/demo2.log")"
cmd=$(grep "^  $tool report -o .* --baseline " "$tmp/demo2.log" | head -n 1)
[ -n "$cmd" ] && eval "$cmd" >/dev/null 2>&1 && [ -s "$d/ab.html" ] ||
    bad "the demo prints no working 'report --baseline' A/B: '$cmd'"
grep -q "^8\. One command for a canary job" "$tmp/demo2.log" || bad "the demo has no gdrtrace run step"
# each step shows what its heading promises (not a heading and nothing, not
# only next:, not a table cut mid-way)
step() { sed -n "/^$1\. /,/^$(($1 + 1))\. /p" "$tmp/demo2.log"; }
step 3 | grep -q "^ *regMr(HOST) " && step 3 | grep -qE "^ +send +[0-9]+ " ||
    bad "step 3 shows no registrations or latency of a process: $(step 3 | tail -n 5)"
step 4 | grep -qE "^ +all +HOST-STAGED" || bad "step 4 shows no archive verdict: $(step 4)"
step 5 | grep -q "^ *conclusion: " && step 5 | grep -q "method mix" ||
    bad "step 5 shows no whole diff (method mix, conclusion): $(step 5 | tail -n 5)"
cmd=$(grep "^  $tool export " "$tmp/demo2.log" | head -n 1)
out=$(eval "$cmd" 2>/dev/null)
grep -q '^gdrtrace_messages_total{' <<<"$out" || bad "the printed '$cmd' exports no samples"
grep -q "15 min" "$tmp/demo2.log" || bad "the demo does not say exited recorders leave the export after 15 min"

mkdir -p "$tmp/mine" && echo keep >"$tmp/mine/notes.txt"
DEMO_DIR=$tmp/mine BUILD=$BUILD tests/demo.sh >"$tmp/refuse.log" 2>&1 && bad "the demo ran in a folder of someone else's files"
[ "$(ls -A "$tmp/mine")" = notes.txt ] || bad "the demo touched a foreign DEMO_DIR: $(ls -A "$tmp/mine")"
[ $fail -eq 0 ] && echo "PASS: quiet build, demo re-runnable, recorders kept, printed commands work (run, report)"
exit $fail
