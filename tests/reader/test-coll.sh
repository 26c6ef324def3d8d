#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-coll.sh — the collective sections (format 1.6, NCCL's profiler
# interface) through every renderer, on hand-made recorders
# (reader_fixture --coll): two ranks of one communicator merged (counts
# summed, histograms bucket by bucket: p50/p95/p99 of the union), NCCL's
# rank/nRanks in summary and in verdict's evidence, --json's cells and
# histograms, export's collective families (a Prometheus histogram whose
# buckets were counted by hand; no NCCL Inspector name; promtool-clean when
# promtool is there), the reason metrics are absent (another profiler, none, NCCL
# before 2.28.3 without NCCL_PROFILER_PLUGIN), nothing at all for a 1.4
# recorder, and a hostile cell refused with a message naming it.
. tests/reader/lib.sh
D=$T/data
mkdir -p "$D"
$FX dmabuf "$D/gdrtrace.job42.node-a.1001.rec" --host node-a --pid 1001 --rank 0 --coll data
$FX dmabuf "$D/gdrtrace.job42.node-b.1002.rec" --host node-b --pid 1002 --rank 1 --coll data

$G summary "$D" > "$T/sum.txt" || fail "summary: exit $?"
grep -q '^== collectives (NCCL.s profiler interface): 1 communicator(s) in 2 of 2 process(es)$' "$T/sum.txt" &&
    pass "summary: the collectives section, 1 communicator in 2 processes" ||
    fail "summary: no collectives header: $(grep -n collectives "$T/sum.txt")"
grep -q '^   comm 0x1234abcd5678ef00 "fx"  ranks 0,1 of 2 on 2 nodes  profiler v5, mode proxy$' "$T/sum.txt" &&
    pass "summary: NCCL's name, ranks, nRanks, nNodes" || fail "summary: comm line: $(grep 'comm 0x' "$T/sum.txt")"
# 2 x (90 at 1 ms, 9 at 1.2 ms, 1 at 5 ms): p50 1 ms, p95 and p99 the 1.2 ms bucket
row=$(grep -E '^ +AllReduce +1 MiB' "$T/sum.txt" | tr -s ' ')
[ "$row" = " AllReduce 1 MiB 200 1.00ms 1.21ms 1.21ms 0.99 RING_LL128" ] &&
    pass "summary: AllReduce 1 MiB: count summed, quantiles of the merged histogram, busbw" ||
    fail "summary: AllReduce 1 MiB row: '$row'"
grep -qE '^ +AllReduce +64 MiB +44 .* RING_SIMPLE \(4 not timed\)$' "$T/sum.txt" &&
    pass "summary: operations without a duration are counted and said" ||
    fail "summary: 64 MiB row: $(grep '64 MiB' "$T/sum.txt")"
grep -q 'to first operation 250.00ms' "$T/sum.txt" && pass "summary: time to the first operation" ||
    fail "summary: no time to first operation"

$G summary --json "$D" > "$T/sum.json" || fail "summary --json: exit $?"
python3 - "$T/sum.json" <<'PY' && pass "--json: cells, merged histograms, bandwidth" || fail "--json: see above"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["collectives"]
assert c["processes"] == 2 and c["processes_with"] == 2, c
m = c["communicators"][0]
assert (m["comm"], m["nranks"], m["nnodes"], m["ranks"]) == ("0x1234abcd5678ef00", 2, 2, [0, 1]), m
ops = {(o["function"], o["size_log2"]): o for o in m["operations"]}
o = ops[("AllReduce", 20)]
assert (o["count"], o["timed"], o["p50_ns"], o["max_ns"]) == (200, 200, 1000000, 5000000), o
assert sum(n for _, n in o["histogram"]) == o["timed"], o["histogram"]
assert o["algo_proto_mix"] == {"RING_LL128": 200}, o
x = ops[("AllReduce", 26)]
assert x["algo_proto_mix"] == {"TREE_SIMPLE": 10, "RING_SIMPLE": 34}, x
assert abs(x["busbw_gbs"] - (1 << 26) / 40e6) < 1e-4, x["busbw_gbs"]
PY

$G verdict "$D" > "$T/ver.txt"
unwrap < "$T/ver.txt" | grep -q 'NCCL: ranks 0,1 of 2 on 2 nodes; AllReduce x244, p50 1.00ms at 1 MiB\.' &&
    pass "verdict: NCCL's ranks and the busiest operation in the evidence" ||
    fail "verdict: $(cat "$T/ver.txt")"

$G export --prometheus "$D" > "$T/m.prom" || fail "export: exit $?"
# by hand: 2 x (90 at 1 ms, 9 at 1.2 ms, 1 at 5 ms): 180 below 2^20 ns, 198
# below 2^21, all 200 below 2^23; sum 2 x 0.1058 s
P='comm="0x1234abcd5678ef00",collective="AllReduce",message_size="1-2MB"'
for want in "gdrtrace_collective_duration_seconds_bucket{$P,le=\"0.000524288\"} 0" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"0.001048576\"} 180" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"0.002097152\"} 198" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"0.004194304\"} 198" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"0.008388608\"} 200" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"68.719476736\"} 200" \
    "gdrtrace_collective_duration_seconds_bucket{$P,le=\"+Inf\"} 200" \
    "gdrtrace_collective_duration_seconds_sum{$P} 0.2116" \
    "gdrtrace_collective_duration_seconds_count{$P} 200" \
    "gdrtrace_collectives_total{$P} 200" \
    'gdrtrace_collectives_total{comm="0x1234abcd5678ef00",collective="AllReduce",message_size="64-128MB"} 44' \
    'gdrtrace_collective_duration_seconds_count{comm="0x1234abcd5678ef00",collective="AllReduce",message_size="64-128MB"} 40' \
    'gdrtrace_collective_info{comm="0x1234abcd5678ef00",comm_name="fx",n_nodes="2",nranks="2",mode="proxy",registration="DIRECT-DMABUF"} 1'; do
    grep -qxF "$want" "$T/m.prom" && pass "export: $want" || fail "export: no line '$want'"
done
grep -q '^nccl_' "$T/m.prom" && fail "export: a series under NCCL Inspector's names: $(grep -m1 '^nccl_' "$T/m.prom")" ||
    pass "export: no series under NCCL Inspector's names (their meaning is a 30-s window's)"
if command -v promtool >/dev/null; then
    out=$(promtool check metrics < "$T/m.prom" 2>&1)
    [ -z "$out" ] && pass "export: promtool check metrics clean" || fail "promtool: $out"
fi

$G report -o "$T/r.html" "$D" > /dev/null 2>&1 || fail "report: exit $?"
grep -q '<h2>Collectives</h2>' "$T/r.html" && grep -q '<h4>AllReduce latency, all sizes</h4>' "$T/r.html" &&
    grep -q '<td>AllReduce</td><td>1-2MB</td><td>200</td><td>1.00ms</td>' "$T/r.html" &&
    pass "report: the collective table and a latency histogram per function" ||
    fail "report: no collective section"

# Absent, and why
A=$T/absent
mkdir -p "$A"
$FX dmabuf "$A/gdrtrace.job42.node-a.2001.rec" --pid 2001 --coll env:/opt/x/libnccl-profiler-inspector.so
$G summary "$A" | unwrap > "$T/a.txt"
grep -q 'collective metrics absent in 1 process(es) (e.g. node-a:2001): NCCL_PROFILER_PLUGIN=/opt/x/libnccl-profiler-inspector.so: NCCL loaded that profiler' "$T/a.txt" &&
    pass "absent: another profiler named by NCCL_PROFILER_PLUGIN, said so" || fail "absent: $(tail -4 "$T/a.txt")"
$G verdict "$A" | unwrap | grep -q 'collective metrics absent: NCCL_PROFILER_PLUGIN=/opt/x/' &&
    pass "absent: verdict's evidence says why" || fail "absent: verdict silent"
rm -f "$A"/*
$FX dmabuf "$A/gdrtrace.job42.node-a.2002.rec" --pid 2002 --coll env:none
$G summary "$A" | unwrap | grep -q 'NCCL_PROFILER_PLUGIN=none: NCCL loads no profiler' &&
    pass "absent: NCCL_PROFILER_PLUGIN=none" || fail "absent: none not said"
rm -f "$A"/*
$FX dmabuf "$A/gdrtrace.job42.node-a.2003.rec" --pid 2003 --coll unset --nccl 22703
$G summary "$A" | unwrap | grep -q 'NCCL 2.27.3 loads a profiler only when NCCL_PROFILER_PLUGIN names it' &&
    pass "absent: NCCL before 2.28.3 without NCCL_PROFILER_PLUGIN" || fail "absent: old NCCL not said"
$G export --prometheus "$A" | grep -q '^gdrtrace_collective_metrics_absent{why="NCCL 2.27.3 loads' &&
    pass "absent: exported with its reason" || fail "absent: not exported"

# A 1.4 recorder: not a word about collectives anywhere
O=$T/old
mkdir -p "$O"
$FX dmabuf "$O/gdrtrace.job42.node-a.3001.rec" --pid 3001
{ $G summary "$O"; $G summary --full "$O"; $G summary --json "$O"; $G verdict "$O"; $G export --prometheus "$O"; } > "$T/old.txt" 2>&1
$G report -o "$T/old.html" "$O" > /dev/null 2>&1 && cat "$T/old.html" >> "$T/old.txt"
grep -qiE 'collective|nccl_bus' "$T/old.txt" && fail "1.4 recorder: collective output: $(grep -iE 'collective|nccl_bus' "$T/old.txt" | head -2)" ||
    pass "1.4 recorder: no collective output from any renderer"

# Hostile: a cell naming function 200
cp "$D/gdrtrace.job42.node-a.1001.rec" "$T/bad.rec"
python3 - "$T/bad.rec" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack_from("<I", b, 36)[0]
for i in range(n):
    sid, esz, off, size, cnt = struct.unpack_from("<IIQQQ", b, 40 + 32 * i)
    if sid == 7:  # GTR_SEC_COLL_COMMS: entry 0's cells[0].func (offset 288 + 4)
        b[off + 292] = 200
open(p, "wb").write(b)
PY
out=$($G summary "$T/bad.rec" 2>&1)
echo "$out" | grep -q 'coll_comms\[0\].cells\[0\]: function 200 or size bucket 20 out of range' &&
    pass "hostile: a cell with function 200 is refused, named" || fail "hostile: $out"
finish "test-coll: all collective checks passed"
