#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-summary-scale.sh — `gdrtrace summary` reads at a thousand ranks
# (issue 21), on 1,000 recorders from `reader_scale gen` (8 ranks a node, a
# world communicator and one per node):
#  * all ranks alike: the default summary is short (<= 60 lines), says no
#    process differs, and lists no rank;
#  * a few ranks made to differ (one registers by peermem, one falls back,
#    one is 10x slower, one has no launcher rank and no NCCL version): the
#    summary names exactly those processes, in the world communicator and in
#    their node's, and nobody else;
#  * unknown values print as `?` with the reason, never -1 (summary, --ranks,
#    --full, verdict);
#  * every line of summary, summary --ranks, summary --full and verdict fits
#    100 columns;
#  * hosts node0 .. node124 come in natural order (node2 before node10) in
#    summary --ranks, summary --full, verdict --full, export and ls;
#  * verdict ends with one `next:` step naming what to run for the outcome.
. "$(dirname "$0")/lib.sh"
S=$BUILD/tests/reader_scale
[ -x "$S" ] || { echo "FAIL $S not built"; exit 1; }
wide() { awk 'length($0) > 100 { n++ } END { print n + 0 }' "$1"; }
minus1() { grep -cE '(^|[^0-9A-Za-z.x-])-1([^0-9]|$)' "$1"; }

# 1. all ranks alike
mkdir -p "$T/alike"
"$S" gen "$T/alike" 1000 small || { echo "FAIL reader_scale gen"; exit 1; }
$G summary "$T/alike" >"$T/a.txt"; rc=$?
n=$(wc -l <"$T/a.txt")
[ $rc = 0 ] && [ "$n" -le 60 ] && grep -q '^== communicators: 126; 0 process(es) differ' "$T/a.txt" &&
    ! grep -q '^     rank ' "$T/a.txt" && grep -q 'and 124 more alike' "$T/a.txt" &&
    pass "1,000 ranks alike: $n lines, no process listed, 125 node communicators on one line" ||
    fail "alike: exit $rc, $n lines: $(head -40 "$T/a.txt")"

# 2. a few differ
mkdir -p "$T/odd"
"$S" gen "$T/odd" 1000 small natural peermem=17 fallback=42 slow=99 unknown=500 ||
    { echo "FAIL reader_scale gen"; exit 1; }
$G summary "$T/odd" >"$T/o.txt"; rc=$?
n=$(wc -l <"$T/o.txt")
listed=$(grep -oE '^     rank [0-9?]+ ' "$T/o.txt" | awk '{ print $2 }' | sort -n | tr '\n' ' ')
[ $rc = 0 ] && [ "$n" -le 60 ] && [ "$listed" = "17 17 42 42 99 99 " ] &&
    grep -q '6 process(es) differ' "$T/o.txt" &&
    grep -q 'rank 17 (node2 pid 100017): DIRECT-PEERMEM (the majority: DIRECT-DMABUF)' "$T/o.txt" &&
    grep -q 'rank 42 (node5 pid 100042): FALLBACK (the majority: DIRECT-DMABUF); 6 fallback' "$T/o.txt" &&
    grep -q 'rank 99 (node12 pid 100099): reg p50 .*10.0x the median' "$T/o.txt" &&
    pass "1,000 ranks, 3 made to differ: exactly ranks 17, 42, 99 listed, each in 2 communicators ($n lines)" ||
    fail "odd: exit $rc, $n lines, listed: $listed: $(cat "$T/o.txt")"
js=$($G summary --json "$T/odd" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sorted("%d:%s" % (x["rank"], ",".join(x["why"])) for c in d["communicators"] for x in c["differing"]))')
want="['17:verdict', '17:verdict', '42:verdict,fallbacks', '42:verdict,fallbacks', \
'99:slow reg,slow dereg,slow send', '99:slow reg,slow dereg,slow send']"
[ "$js" = "$want" ] && pass "summary --json: the same processes differ, each with why" ||
    fail "summary --json differing: $js"
grep -q '^   ranks    0..999 (999 process(es) with a rank); ? for 1 process(es) (no launcher variable' "$T/o.txt" &&
    grep -q 'NCCL 2.28.3 x999, ? x1' "$T/o.txt" &&
    grep -q '^   ?        NCCL: ncclGetVersion not visible' "$T/o.txt" &&
    pass "unknown rank and NCCL version: '?' with the reason" || fail "unknowns: $(head -8 "$T/o.txt")"

# 3. widths, -1, order in every view
$G summary --ranks "$T/odd" >"$T/r.txt"
$G verdict "$T/odd" >"$T/v.txt"; vrc=$?
$G verdict --full "$T/odd" >"$T/va.txt" # every node on a line (test-verdict-scale.sh: the rest)
mkdir -p "$T/few"
"$S" gen "$T/few" 96 small natural unknown=3 slow=90 || fail "gen few"
$G summary --full "$T/few" >"$T/f.txt"
for f in a o r v va f; do
    w=$(wide "$T/$f.txt"); m=$(minus1 "$T/$f.txt")
    [ "$w" = 0 ] && [ "$m" = 0 ] && pass "$f.txt: every line <= 100 columns, no -1" ||
        fail "$f.txt: $w line(s) > 100 columns, $m with -1: $(awk 'length($0) > 100' "$T/$f.txt" | head -3; grep -E '(^|[^0-9A-Za-z.x-])-1([^0-9]|$)' "$T/$f.txt" | head -3)"
done
grep -q '^== process node0 pid 100003  job job42  rank ?/? (local ?)  exited' "$T/f.txt" &&
    grep -q '^   ?        rank: no launcher variable' "$T/f.txt" &&
    grep -q 'NCCL: ncclGetVersion not visible' "$T/f.txt" &&
    pass "summary --full: rank ?/? and the reason" || fail "--full unknowns: $(grep -A8 'pid 100003' "$T/f.txt")"
nodes_v=$(grep -oE '^node node[0-9]+' "$T/va.txt" | awk '{ print $2 }')
nodes_r=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^node/ { print $2 }' "$T/r.txt" | uniq | head -125)
nodes_f=$(grep -oE '^== process node[0-9]+' "$T/f.txt" | awk '{ print $3 }' | uniq)
nat=$(seq 0 124 | sed 's/^/node/')
[ "$nodes_v" = "$nat" ] && [ "$nodes_r" = "$nat" ] && [ "$nodes_f" = "$(seq 0 11 | sed 's/^/node/')" ] &&
    pass "natural host order (node2 before node10) in verdict --full, summary --ranks, summary --full" ||
    fail "order: verdict $(echo $nodes_v | head -c 200) / ranks $(echo $nodes_r | head -c 200) / full $(echo $nodes_f)"

twelve=$(seq 0 11 | sed 's/^/node/')
ex=$($G export --exited-within 1000w "$T/few" | grep '^gdrtrace_registrations_total' | grep -o 'host="[^"]*"' | tr -d '"' | cut -d= -f2 | uniq)
ls=$($G ls "$T/few" | awk 'NR > 1 { print $1 }' | uniq)
[ "$ex" = "$twelve" ] && [ "$ls" = "$twelve" ] && pass "natural host order in export's samples and ls" ||
    fail "order: export $(echo $ex) / ls $(echo $ls)"

# 4. next: the last line of verdict, one step for the outcome
last=$(tail -n 2 "$T/v.txt" | tr -s ' \n' '  ')
[ $vrc = 13 ] && grep -q '^next: gdrtrace summary .*odd names who fell back; gdrtrace doctor on node5 (gate 2)' <<<"$last" &&
    pass "verdict FALLBACK ends with next: summary, then doctor on the node that fell back" ||
    fail "next (exit $vrc): $last"
$G verdict "$T/alike" | tail -n 1 | grep -q '^next: compare with a baseline run (gate 4): gdrtrace diff BASE ' &&
    pass "verdict DIRECT-DMABUF: next: gdrtrace diff against a baseline" || fail "next dmabuf"
$G verdict "$T/empty" 2>/dev/null | tail -n 1 | grep -q '^next: likely NCCL did not load the plugin' &&
    pass "verdict NO-DATA without recorders: next: the likely cause" || fail "next nodata"
finish "summary at 1,000 ranks: short, exact, ? not -1, <= 100 columns, natural order, next:"
