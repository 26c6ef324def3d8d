#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-verdict-scale.sh — `gdrtrace verdict` reads at a thousand ranks: the
# communicators and nodes that agree with the majority print as one line
# each (tools/render/alike_text.h), everything else as before.  On 1,000 recorders from
# `reader_scale gen` (8 ranks a node, hosts node0..node124, a world
# communicator and one per node) with rank 17 (node2) registering by peermem
# and rank 42 (node5) falling back:
#  * the text is at most 40 lines (the old one: 400 and more);
#  * exactly the communicators and nodes whose verdict is not the majority's
#    have a line of their own, with their evidence, word for word as in
#    --full (every line, as before this change);
#  * the collapsed lines count the alike ones right (the count of majority
#    lines in --full) and name them: the host ranges expand to exactly the
#    alike nodes of --full, in natural order (node[0-1,3-4,6-124]);
#  * the exit code is --full's and the one the verdict always gave (13,
#    FALLBACK; 20 under --expect dmabuf), and --json's "exit";
#  * --json is the same with and without --full and lists every
#    communicator and node; no line of either text is wider than 100;
#  * at or under 8 alike lines (64 ranks: 8 nodes) nothing collapses, and
#    every rank alike (1,000) takes a handful of lines with exit 0.
. "$(dirname "$0")/lib.sh"
S=$BUILD/tests/reader_scale
[ -x "$S" ] || { echo "FAIL $S not built"; exit 1; }
wide() { awk 'length($0) > 100 { n++ } END { print n + 0 }' "$1"; }

mkdir -p "$T/odd" "$T/alike" "$T/eight"
"$S" gen "$T/odd" 1000 small natural peermem=17 fallback=42 >/dev/null &&
    "$S" gen "$T/alike" 1000 small >/dev/null && "$S" gen "$T/eight" 64 small >/dev/null ||
    { echo "FAIL reader_scale gen"; exit 1; }

$G verdict "$T/odd" >"$T/v.txt"; rc=$?
$G verdict --full "$T/odd" >"$T/f.txt"; frc=$?
$G verdict --json "$T/odd" >"$T/j.json"; jrc=$?
$G verdict --json --full "$T/odd" >"$T/jf.json"

# 1. short, and the exit code is the verdict's, whatever the text
n=$(wc -l <"$T/v.txt"); nf=$(wc -l <"$T/f.txt")
[ "$n" -le 40 ] && [ "$nf" -ge 400 ] && pass "1,000 ranks, 2 made to differ: $n lines (--full: $nf)" ||
    fail "length: $n lines (want <= 40), --full $nf: $(head -60 "$T/v.txt")"
jexit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit"])' "$T/j.json")
[ $rc = 13 ] && [ $frc = 13 ] && [ $jrc = 13 ] && [ "$jexit" = 13 ] &&
    pass "exit 13 (FALLBACK) collapsed, with --full and in --json" ||
    fail "exit: collapsed $rc, --full $frc, --json $jrc ($jexit): want 13"
$G verdict --expect dmabuf "$T/odd" >/dev/null; e1=$?
$G verdict --expect dmabuf --full "$T/odd" >/dev/null; e2=$?
[ $e1 = 20 ] && [ $e2 = 20 ] && pass "--expect dmabuf: 20 either way" || fail "--expect: $e1 / $e2"

# 2. exactly the lines of another verdict than the majority, in full
# (--full's lines, joined with their continuation lines: a record a line)
rec() { unwrap <"$1" | grep -E "^$2 "; }
maj=DIRECT-DMABUF
for kind in comm node; do
    want=$(rec "$T/f.txt" $kind | awk -v m=$maj '$3 != m')
    got=$(rec "$T/v.txt" $kind | grep -v '^[a-z]* (')
    nwant=$(grep -c . <<<"$want")
    [ -n "$want" ] && [ "$got" = "$want" ] &&
        pass "$kind: the $nwant line(s) of another verdict, each as --full prints it" ||
        fail "$kind lines: want <<$want>> got <<$got>>"
done
grep -q '^node node2  .* MIXED ' "$T/v.txt" && grep -q '^node node5  .* FALLBACK ' "$T/v.txt" &&
    [ "$(grep -c '^comm 0x' "$T/v.txt")" = 3 ] &&
    pass "named: node2 MIXED, node5 FALLBACK, world + their node communicators" ||
    fail "the differing: $(grep -E '^(comm 0x|node node)' "$T/v.txt")"

# 3. the collapsed lines count and name the alike ones
for kind in comm node; do
    alike=$(rec "$T/f.txt" $kind | awk -v m=$maj '$3 == m' | grep -c .)
    line=$(rec "$T/v.txt" $kind | grep "^$kind (")
    [ "$(grep -c . <<<"$line")" = 1 ] && grep -q "^$kind ($alike alike) *$maj " <<<"$line" &&
        pass "$kind: one collapsed line, ($alike alike) as --full counts them" ||
        fail "$kind collapsed: want ($alike alike): $line"
done
hosts=$(rec "$T/v.txt" node | grep '^node (' | grep -o 'nodes: [^;]*' | sed 's/^nodes: //')
[ "$hosts" = 'node[0-1,3-4,6-124]' ] && pass "host ranges in natural order: $hosts" ||
    fail "host ranges: '$hosts'"
expanded=$(python3 - "$hosts" <<'EOF'
import re, sys
out = []
for term in re.findall(r'[^,\[\]]*\[[^\]]*\][^,]*|[^,]+', sys.argv[1]):
    m = re.match(r'(.*)\[(.*)\](.*)', term.strip())
    if not m:
        out.append(term.strip()); continue
    for r in m.group(2).split(','):
        a, _, b = r.partition('-')
        for v in range(int(a), int(b or a) + 1):
            out.append('%s%0*d%s' % (m.group(1), len(a), v, m.group(3)))
print('\n'.join(out))
EOF
)
want=$(rec "$T/f.txt" node | awk -v m=$maj '$3 == m { print $2 }')
[ "$expanded" = "$want" ] && pass "the ranges expand to exactly the $(grep -c . <<<"$want") alike nodes of --full" ||
    fail "ranges expand to $(echo $expanded | head -c 300)"
grep -q '0x4e0de00000000000\.\.01, 0x4e0de00000000003\.\.04, 0x4e0de00000000006\.\.7c' \
    <(unwrap <"$T/v.txt") && pass "communicator ids as runs of consecutive commIds" ||
    fail "ids: $(grep -A6 '^comm (' "$T/v.txt")"

# 4. JSON keeps everything; widths; the tail
cmp -s "$T/j.json" "$T/jf.json" &&
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["communicators"]) == 126 and len(d["nodes"]) == 125, (len(d["communicators"]), len(d["nodes"]))' \
        "$T/j.json" && pass "--json: the same with --full, every communicator (126) and node (125)" ||
    fail "--json differs with --full or lacks lines"
for f in v f; do
    w=$(wide "$T/$f.txt")
    [ "$w" = 0 ] && pass "$f.txt: every line <= 100 columns" || fail "$f.txt: $w line(s) > 100 columns"
done
[ "$(sed -n '/^all /,$p' "$T/v.txt")" = "$(sed -n '/^all /,$p' "$T/f.txt")" ] &&
    pass "the all line and next: as --full's" || fail "tail differs"

# 5. the threshold, and a job where every rank agrees
$G verdict "$T/eight" >"$T/8.txt"; r8=$?
$G verdict --full "$T/eight" >"$T/8f.txt"
[ $r8 = 0 ] && cmp -s "$T/8.txt" "$T/8f.txt" && ! grep -q ' alike) ' "$T/8.txt" &&
    pass "8 nodes, 8 node communicators alike: every line as before" || fail "8 nodes: $(diff "$T/8.txt" "$T/8f.txt" | head -20)"
$G verdict "$T/alike" >"$T/a.txt"; ra=$?
na=$(wc -l <"$T/a.txt")
[ $ra = 0 ] && [ "$na" -le 15 ] && grep -q '^node (125 alike) ' "$T/a.txt" &&
    grep -q 'node-\[0000-0124\]' "$T/a.txt" && [ "$(wide "$T/a.txt")" = 0 ] &&
    pass "1,000 ranks alike: $na lines, exit 0, node-[0000-0124]" || fail "alike (exit $ra): $(head -40 "$T/a.txt")"
finish "verdict at 1,000 ranks: short, every differing line in full, counts exact, exit and JSON unchanged"
