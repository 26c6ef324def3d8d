#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-ab.sh — `gdrtrace diff` as the A/B judge (docs/diff.md), end to end:
#  * the emulated H100 A/B (tests/reader/data/abtest: host-staged through the
#    validation layer against emulated DMA-BUF through the copier) is "not
#    measurable on an emulated NIC", with the copier's share, one run a side
#    or two, never "slower"; --json names the rule and carries intervals;
#  * one run a side of the harness: every noisy row "noise unknown", the
#    conclusion asks for repeats, never "no difference";
#  * k runs a side by --a/--b and by --runs-a/--runs-b (a folder of runs),
#    the same judgement both ways; usage mistakes exit 64 naming the problem.
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
H=$BUILD/harness/harness
D=tests/reader/data/abtest
T=$(mktemp -d "${TMPDIR:-/tmp}/ab-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

out=$("$G" diff "$D/H1.zst" "$D/B1.zst" 2>&1); rc=$?
c=$(grep '^conclusion:' <<<"$out")
if [ $rc = 0 ] && grep -q 'not measurable on an emulated NIC' <<<"$c" &&
    grep -q "copier's share of host CPU: B [0-9]* %" <<<"$c" && ! grep -q 'slower\|faster' <<<"$c"; then
    pass "H100 H1 vs B1: not measurable on an emulated NIC, the copier's share shown"
else
    fail "H100 H1 vs B1 (exit $rc): $c"
fi
grep -q 'mechanism changed' <<<"$c" && pass "H1 vs B1: the mechanism changed (host -> DMA-BUF)" ||
    fail "H1 vs B1: mechanism: $c"
c=$("$G" diff --a "$D/H1.zst" --a "$D/H2.zst" --b "$D/B1.zst" --b "$D/B2.zst" 2>&1 | grep '^conclusion:')
grep -q 'not measurable on an emulated NIC' <<<"$c" && pass "H1 H2 vs B1 B2: not measurable" ||
    fail "H1 H2 vs B1 B2: $c"
"$G" diff --json "$D/H1.zst" "$D/B1.zst" >"$T/hb.json" 2>/dev/null
if python3 - "$T/hb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rule"] == "emulated", d["rule"]
assert d["statistics"]["runs_a"] == 1 and not d["statistics"]["noise_known"]
g = d["three_groups"]
assert g["emulated_a"] and g["emulated_b"] and g["copier_share_b"] > 0
rows = [r for k in ("application_slo", "evidence", "host_pressure") for r in g[k]["rows"]]
for r in rows:
    for k in ("interval_low", "interval_high", "p", "state", "role", "evidence"):
        assert k in r, (r["name"], k)
    assert r["state"] not in ("up", "down") or r["role"] == "mechanism", r
PY
then pass "--json: rule emulated, statistics, intervals, no effect decided with one run"
else fail "--json of H1 vs B1"; fi

# four short harness runs
if [ -x "$H" ]; then
    export GDRTRACE_DIR="$T/shm"
    mkdir -p "$GDRTRACE_DIR" "$T/runs"
    for i in 1 2 3 4; do
        mkdir -p "$T/runs/r$i"
        "$H" --abi 12 --data-only --iters 6 --max-size 256K --dir "$T/runs/r$i" \
            --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$T/h$i.log" 2>&1 ||
            { fail "harness run $i"; tail -n 5 "$T/h$i.log"; }
    done
    out=$("$G" diff "$T/runs/r1" "$T/runs/r2" 2>&1)
    c=$(grep '^conclusion:' <<<"$out")
    if grep -q 'the noise is unknown' <<<"$c" && ! grep -q 'no difference' <<<"$c" &&
        ! grep -Eq '(beyond|within) noise$' <<<"$(sed -n '/three groups/,/^conclusion/p' <<<"$out")"; then
        pass "one run a side: noise unknown, no row judged, repeat asked"
    else
        fail "one run a side: $c"
    fi
    mkdir -p "$T/A" "$T/B"
    mv "$T/runs/r1" "$T/runs/r2" "$T/A/"
    mv "$T/runs/r3" "$T/runs/r4" "$T/B/"
    x=$("$G" diff --runs-a "$T/A" --runs-b "$T/B" 2>&1 | grep -E '^conclusion:|runs of A')
    y=$("$G" diff --a "$T/A/r1" --a "$T/A/r2" --b "$T/B/r3" --b "$T/B/r4" 2>&1 |
        grep -E '^conclusion:|runs of A')
    if [ -n "$x" ] && [ "$x" = "$y" ] && grep -q '2 runs of A, 2 of B' <<<"$x"; then
        pass "--runs-a/--runs-b and --a/--b: the same 2 x 2 judgement"
    else
        fail "folder of runs vs --a/--b: [$x] vs [$y]"
    fi
else
    echo "note: $H not built: the harness cases are left out"
fi

"$G" diff --a "$D/H1.zst" >"$T/o" 2>&1; rc=$?
[ $rc = 64 ] && grep -q 'runs of both sides are needed' "$T/o" && pass "--a without --b: exit 64, said" ||
    fail "--a alone: exit $rc: $(head -n 2 "$T/o")"
"$G" diff --a "$D/H1.zst" --b "$D/B1.zst" "$D/H2.zst" >"$T/o" 2>&1; rc=$?
[ $rc = 64 ] && grep -q 'no other path may follow' "$T/o" && pass "--a/--b with a stray path: exit 64" ||
    fail "stray path: exit $rc: $(head -n 2 "$T/o")"
"$G" diff --runs-a "$T/nowhere" --b "$D/B1.zst" >"$T/o" 2>&1; rc=$?
[ $rc = 2 ] && grep -q 'nowhere' "$T/o" && pass "--runs-a on a missing folder: exit 2, named" ||
    fail "--runs-a missing: exit $rc: $(head -n 2 "$T/o")"
mkdir -p "$T/empty"
"$G" diff --runs-a "$T/empty" --b "$D/B1.zst" >"$T/o" 2>&1; rc=$?
[ $rc = 64 ] && grep -q 'no run in it' "$T/o" && pass "--runs-a on an empty folder: exit 64, said" ||
    fail "--runs-a empty: exit $rc: $(head -n 2 "$T/o")"

[ $fails = 0 ] && echo "all passed" && exit 0
exit 1
