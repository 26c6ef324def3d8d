#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-hostp.sh — the runbook's three groups on real recorders: the v11
# harness (tests/harness) drives the built plugin over sock three times:
#   S1      data (seed 11) through registered host memory (staging)
#   N       the same data with no memory registered (--no-reg)
#   A, B    three more runs like S1 each (repeated runs of one setting)
# and the reader must say:
#  - S1 has host memory in the data path (its staging high-water equals what
#    the harness registered: both arenas and the LL buffer), N has none;
#  - summary prints the three groups, the SLO saying why it is not recorded;
#  - diff A B (one folder a side, each one run) says the noise is unknown;
#    three runs a side judged against themselves end "conclusion: no
#    difference (within noise)", and --json says the same (the A/A rate on
#    distinct runs is tests/ab/ab-calibration.sh's);
#  - diff of S1 S2 S3 against N1 N2 N3 names host memory in the data path
#    -100 % beyond noise, and "faster" only with the SLO row that moved;
#  - a copier's CPU (format 1.7 helper fields, written into S1's recorders
#    as the GPU-memory copier's sampler would): summary and --json show it,
#    CPU per GB counts it, and diff S1 S1+copier does not read it as saved.
# The CPU figures against /proc are test_rec_host's (C, process held
# stopped); here only that they are there.
. "$(dirname "$0")/lib.sh"
H=$BUILD/harness/harness
[ -x "$H" ] || { echo "SKIP: $H is not built (make tests)"; exit 77; }
run() { # dir, harness options...
    mkdir -p "$T/$1"
    local d=$1
    shift
    GDRTRACE_TRANSPORT=sock "$H" --abi 11 --data-only --seed 11 --iters 20 --dir "$T/$d" "$@" \
        >"$T/$d.log" 2>&1 || { fail "harness $d: $(tail -3 "$T/$d.log")"; return 1; }
}
run S1 && run N --no-reg && run S2 && run S3 && run N2 --no-reg && run N3 --no-reg ||
    { finish; exit 1; }
for side in A B; do
    for k in 1 2 3; do run "$side$k" || { finish; exit 1; }; done
    mkdir -p "$T/$side"
    cp "$T/${side}"[123]/*.rec "$T/$side/"
done
hp() { # dir key: the job's host-pressure figure from summary --json
    "$G" summary --json "$T/$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["three_groups"]["host_pressure"].get(sys.argv[1], "none"))' "$2"
}
s1=$(hp S1 staging_high_water_bytes)
n=$(hp N staging_high_water_bytes)
if [ "${s1:-0}" -gt 0 ] 2>/dev/null && [ "$n" = 0 ]; then
    pass "host memory in the data path: staged run $s1 bytes, unregistered run $n"
else
    fail "host memory in the data path: staged '$s1', unregistered '$n'"
fi
regd=$("$G" summary --json "$T/S1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(c["registrations"]["host"]["host"]["bytes"] for c in d["communicators"]))' 2>/dev/null)
[ -n "$regd" ] && [ "$s1" = "$regd" ] && pass "staging high-water = bytes registered ($regd)" ||
    fail "staging high-water $s1 vs bytes registered '$regd'"
cpu=$(hp S1 cpu_seconds)
thr=$(hp S1 data_path_threads)
python3 -c "import sys; sys.exit(0 if float('$cpu') > 0 and int('$thr') >= 2 else 1)" 2>/dev/null &&
    pass "process CPU $cpu s, $thr data-path threads recorded" ||
    fail "process CPU '$cpu', data-path threads '$thr'"

"$G" summary "$T/S1" >"$T/sum.txt" 2>&1
grep -q '^== three groups' "$T/sum.txt" && grep -q 'application SLO: not recorded' "$T/sum.txt" &&
    grep -q 'host memory in the data path: ' "$T/sum.txt" &&
    pass "summary: the three groups, SLO not recorded with why" ||
    fail "summary: $(grep -A8 'three groups' "$T/sum.txt" | head -9)"
awk 'length > 100 { bad = 1 } END { exit bad }' "$T/sum.txt" &&
    pass "summary: no line wider than 100 columns" || fail "summary: a line wider than 100"

"$G" diff "$T/A" "$T/B" >"$T/one.txt" 2>&1
grep -q '^conclusion: mechanism unchanged; the noise is unknown with 1 run(s) of A and 1 of B' "$T/one.txt" &&
    pass "diff of one folder a side: the noise is unknown" ||
    fail "diff A B: $(tail -1 "$T/one.txt")"
same=(--a "$T/A1" --a "$T/A2" --a "$T/A3" --b "$T/A1" --b "$T/A2" --b "$T/A3")
"$G" diff "${same[@]}" >"$T/same.txt" 2>&1
rc=$?
last=$(tail -1 "$T/same.txt")
[ $rc = 0 ] && [ "$last" = "conclusion: no difference (within noise)" ] &&
    pass "diff of the same three runs a side: $last" ||
    fail "diff A B (exit $rc): $(sed -n '/three groups/,$p' "$T/same.txt")"
"$G" diff --json "${same[@]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = d["three_groups"]
assert d["conclusion"] == "no difference (within noise)", d["conclusion"]
assert not g["application_slo"]["collectives_recorded"] and g["application_slo"]["why"]
assert g["host_pressure"]["a"]["recorded"] and g["host_pressure"]["b"]["recorded"]
assert any(r["name"] == "host memory in the data path" for r in g["host_pressure"]["rows"])
' 2>"$T/json.err" && pass "diff --json: the same conclusion and the three groups" ||
    fail "diff --json: $(tail -2 "$T/json.err")"

"$G" diff --a "$T/S1" --a "$T/S2" --a "$T/S3" --b "$T/N" --b "$T/N2" --b "$T/N3" >"$T/ab.txt" 2>&1
c=$(grep '^conclusion:' "$T/ab.txt")
pace=$(grep -E '^  \*data moved per data-path second' "$T/ab.txt")
grep -Eq '^  \*host memory in the data path +[0-9.]+ MiB +0 B +-100.0 % .* beyond noise$' "$T/ab.txt" &&
    grep -q 'host memory in the data path -100.0 %' <<<"$c" &&
    { ! grep -qw faster <<<"$c" || grep -q 'beyond noise$' <<<"$pace"; } &&
    pass "diff staged vs unregistered, 3 runs a side: $c" ||
    fail "diff S N: $(sed -n '/three groups/,$p' "$T/ab.txt")"
c=$("$G" diff "$T/S1" "$T/N" 2>&1 | grep '^conclusion:')

# the copier's CPU: 1.5 s user + 0.5 s system in each of S1's recorders
mkdir -p "$T/S1h"
cp "$T"/S1/*.rec "$T/S1h/"
for f in "$T"/S1h/*.rec; do
    python3 - "$f" <<'PY' || fail "patching $f"
import struct, sys
f = open(sys.argv[1], "r+b")
h = f.read(4096)
n = struct.unpack_from("<I", h, 36)[0]           # section_count
for i in range(n):
    sid, esz, off, size, cnt = struct.unpack_from("<IIQQQ", h, 40 + 32 * i)
    if sid == 9:                                 # GTR_SEC_HOST
        f.seek(off + 160)                        # helper_utime_ns (asserted in the header)
        f.write(struct.pack("<QQII", 1500000000, 500000000, 4242, 1))
        break
else:
    sys.exit("no host section")
PY
done
nproc=$(hp S1 processes)
helper=$(hp S1h helper_cpu_seconds)
g0=$(hp S1 cpu_seconds_per_gb) g1=$(hp S1h cpu_seconds_per_gb) gbm=$(hp S1 bytes_moved)
python3 -c "
import sys
n, h, g0, g1, b = $nproc, float('$helper'), float('$g0'), float('$g1'), $gbm
sys.exit(0 if abs(h - 2.0 * n) < 1e-6 and abs((g1 - g0) - h / (b / 1e9)) < 1e-3 * g1 else 1)" &&
    [ "$(hp S1 helper_cpu_seconds)" = none ] &&
    pass "copier CPU: $helper s over $nproc processes, counted in CPU per GB ($g0 -> $g1)" ||
    fail "copier CPU: helper '$helper' (want $((2 * nproc))), per GB '$g0' -> '$g1', bytes '$gbm'"
"$G" summary "$T/S1h" | grep -Eq "copier process CPU $((2 * nproc)).00 s \($nproc process\(es\) copied through one; in CPU per GB\)" &&
    pass "summary: the copier's CPU line" || fail "summary: $("$G" summary "$T/S1h" | grep -i -A2 'process CPU')"
"$G" diff "$T/S1" "$T/S1h" >"$T/helper.txt" 2>&1
grep -Eq '^   copier process CPU \(s\) +0\.00 +[0-9.]+ ' "$T/helper.txt" &&
    grep -Eq '^   CPU s per GB moved .*\+[0-9]' "$T/helper.txt" && ! grep -q '^conclusion:.*host pressure -' "$T/helper.txt" &&
    pass "diff: the copier's CPU row, CPU per GB up, never host pressure down" ||
    fail "diff S1 S1h: $(sed -n '/host pressure/,$p' "$T/helper.txt")"

"$G" report -o "$T/ab.html" --baseline "$T/S1" "$T/N" >/dev/null 2>&1
grep -q '<section class="host">' "$T/ab.html" && grep -q '<svg class="hostbars"' "$T/ab.html" &&
    grep -q 'host memory in the data path</text><rect class="run-a"' "$T/ab.html" &&
    grep -q '(noise unknown)' "$T/ab.html" && grep -qF "$(sed 's/^conclusion: //' <<<"$c")" "$T/ab.html" &&
    pass "report --baseline: host-pressure bars, noise marks and diff's conclusion" ||
    fail "report --baseline: no host-pressure section as expected"

"$G" export --exited-within 1w "$T/S1" >"$T/s1.prom" 2>&1
want="gdrtrace_host_staging_high_water_bytes{host=\"$(hostname)\",gdrtrace_job=\"\"} $s1"
grep -qxF "$want" "$T/s1.prom" && grep -q '^# TYPE gdrtrace_host_cpu_seconds_total counter$' "$T/s1.prom" &&
    grep -Eq '^gdrtrace_host_cpu_seconds_total\{.*mode="system"\} [0-9.]+$' "$T/s1.prom" &&
    pass "export: host-pressure families, staging high-water $s1" ||
    fail "export: $(grep gdrtrace_host "$T/s1.prom" | head -5)"
if command -v promtool >/dev/null; then
    promtool check metrics <"$T/s1.prom" >"$T/promtool.txt" 2>&1 &&
        pass "export: promtool check metrics is clean" || fail "promtool: $(cat "$T/promtool.txt")"
fi

# the application SLO from NCCL's profiler sections (format 1.6): the
# fixture's collectives, B's durations halved (--latency 50)
for k in c1 c2 c3 c4; do mkdir -p "$T/$k"; done
$FX dmabuf "$T/c1/gdrtrace.j.node-a.1.rec" --pid 1 --coll data
$FX dmabuf "$T/c2/gdrtrace.j.node-a.2.rec" --pid 2 --coll data
$FX dmabuf "$T/c3/gdrtrace.j.node-a.3.rec" --pid 3 --coll data --latency 50
$FX dmabuf "$T/c4/gdrtrace.j.node-a.4.rec" --pid 4 --coll data --latency 50
"$G" diff --a "$T/c1" --a "$T/c2" --b "$T/c2" --b "$T/c1" >"$T/slo-same.txt" 2>&1
grep -Eq '^  [ *]AllReduce p95 +40.00ms +40.00ms' "$T/slo-same.txt" &&
    grep -qx 'conclusion: no difference (within noise)' "$T/slo-same.txt" &&
    pass "diff: the SLO group from the profiler sections; identical: no difference" ||
    fail "diff c1 c2: $(sed -n '/three groups/,$p' "$T/slo-same.txt" | head -12)"
"$G" diff --a "$T/c1" --a "$T/c2" --b "$T/c3" --b "$T/c4" >"$T/slo-faster.txt" 2>&1
grep -Eq '^  \*AllReduce p50 +1.00ms +500.0us +-50.0 % .* beyond noise$' "$T/slo-faster.txt" &&
    grep -Eq '^  \*AllReduce algbw \(GB/s\) .* beyond noise$' "$T/slo-faster.txt" &&
    grep -q '^conclusion: .*application SLO improved: faster' "$T/slo-faster.txt" &&
    pass "diff: SLO halved -> 'application SLO improved: faster'" ||
    fail "diff c1 c3: $(sed -n '/three groups/,$p' "$T/slo-faster.txt" | head -14)"
"$G" report -o "$T/slo.html" --baseline "$T/c1" "$T/c3" >/dev/null 2>&1
ov=$(sed -n '/<section class="coll-ab">/,/<\/section>/p' "$T/slo.html")
grep -q '<h4>AllReduce latency, A against B</h4>' <<<"$ov" &&
    grep -q '<li>A (baseline): p50 1.00ms, .*</li><li>B: p50 500.0us, ' <<<"$ov" &&
    grep -q '<rect class="run-a"' <<<"$ov" && grep -q '<rect class="run-b"' <<<"$ov" &&
    pass "report --baseline: the collective latency overlay, A's p50 1.00ms against B's 500.0us" ||
    fail "report --baseline overlay: $(head -c 600 <<<"$ov")"
finish "host pressure: recorded, summarised and judged side by side"
