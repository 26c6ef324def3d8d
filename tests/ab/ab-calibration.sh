#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ab-calibration.sh — the A/B judge (`gdrtrace diff`, tools/lib/ab.c) measured
# as an instrument, with real runs and real mechanisms (docs/diff.md):
#  * A/A: runs of the harness (ABI v12, two processes, the sock transport),
#    all alike; pairs of disjoint groups of k runs drawn from them are
#    diffed: at least 95 % must conclude "no difference" and no conclusion
#    may contradict its rows (judged again here from the JSON's rows);
#  * power: the same runs with an effect injected the way it happens —
#    host CPU: tests/ab/inject_cpu.c (LD_PRELOAD, a burner in every process
#    of B, children included, AB_INJECT_CPU times the process's own CPU);
#    data-path latency: tests/ab/inject_delay.c (LD_PRELOAD around send,
#    sendmsg, recv: a sleep per byte moved, set to the given fraction of the
#    time a byte took in the baseline runs) — groups of k runs of B against
#    k runs of A; detected when the row moved the right way beyond noise and
#    the conclusion says so ("host path loaded more"; "slower").
# The runs are made interleaved (A, B-cpu, B-delay, A, ...) so that the
# shared machine's load falls on every kind alike.
#   AB_MODE=check (default, make check): k = 3, fast settings (under a
#     minute on 2 cores); prints the power for +100 % host CPU and +50 %
#     data-path latency against the 90 % target.
#   AB_MODE=bench (make bench, BENCH_SCRIPT): the power curve, effect size x
#     k = 3, 5, 10, and the smallest effect found in >= 90 % for each k;
#     prints the table docs/results/ab-calibration.md keeps.
# Enforced: no conclusion contradicts its rows, and the A/A false alarms are
# not more than the judge's stated 5 % rate explains (a binomial tail under
# 1/1000 fails).  Power is printed against its target, not enforced: it is
# a property of the runs' noise on the machine (the bench records it).
# Exit 0 pass, 1 fail, 77 skip (harness not built).
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
H=$BUILD/harness/harness
CPU_SO=$BUILD/tests/libab_inject_cpu.so
DELAY_SO=$BUILD/tests/libab_inject_delay.so
MODE=${AB_MODE:-check}
for f in "$H" "$CPU_SO" "$DELAY_SO"; do
    [ -e "$f" ] || { echo "skip: $f is not built (make tests)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skip: python3 is needed to read diff --json"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ab-cal.XXXXXX")
[ -n "${AB_KEEP:-}" ] && echo "kept: $T" || trap 'rm -rf "$T"' EXIT
ABS_CPU=$(cd "$(dirname "$CPU_SO")" && pwd)/$(basename "$CPU_SO")
ABS_DELAY=$(cd "$(dirname "$DELAY_SO")" && pwd)/$(basename "$DELAY_SO")
export GDRTRACE_DIR="$T/shm"
mkdir -p "$GDRTRACE_DIR"

if [ "$MODE" = bench ]; then
    ITERS=${AB_ITERS:-60} MAXSZ=${AB_MAX_SIZE:-4M}
    NA=${AB_NA:-20}        # baseline runs (A/A groups up to k = 10)
    NB=${AB_NB:-10}        # runs a level of effect
    CPU_LEVELS=${AB_CPU_LEVELS:-"0.25 0.5 1.0"}
    DELAY_LEVELS=${AB_DELAY_LEVELS:-"0.25 0.5 1.0"}
    KS=${AB_KS:-"3 5 10"}
    TRIALS=${AB_TRIALS:-20}
    PTRIALS=${AB_PTRIALS:-20}
else
    ITERS=${AB_ITERS:-40} MAXSZ=${AB_MAX_SIZE:-4M}
    NA=${AB_NA:-9} NB=${AB_NB:-5} PTRIALS=${AB_PTRIALS:-10}
    CPU_LEVELS=1.0 DELAY_LEVELS=0.5 KS=3
    TRIALS=${AB_TRIALS:-40}
fi

# one harness run into folder $1; the rest of the arguments are env settings
run() {
    local d=$1
    shift
    mkdir -p "$d"
    env "$@" "$H" --abi 12 --data-only --iters "$ITERS" --max-size "$MAXSZ" --seed 7 --dir "$d" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$d.log" 2>&1 ||
        { echo "FAIL: the harness failed ($d.log):"; tail -n 5 "$d.log"; exit 1; }
    # one compact archive a run: what the trials read
    "$G" dump -o "$d.zst" "$d" >/dev/null 2>&1 || { echo "FAIL: gdrtrace dump $d"; exit 1; }
}

# seconds a KiB took in a baseline run: each process's exchange time over
# the bytes it moved out and in (the harness's own report)
ns_per_kib() {
    sed -n 's/.* moved [0-9]* messages (\([0-9.]*\) MiB) out and [0-9]* (\([0-9.]*\) MiB.* in, in \([0-9.]*\) s;.*/\1 \2 \3/p' "$@" |
        awk '{ r = $3 / (($1 + $2) * 1024) * 1e9; s += r; n++ } END { if (n) printf "%.0f\n", s / n }'
}

load() { awk '{ print $1 }' /proc/loadavg 2>/dev/null || echo 0; }
cores=$(nproc 2>/dev/null || echo 1)
load0=$(load)
start=$(date +%s)
mkdir -p "$T/A"
run "$T/A/0"
run "$T/A/1"
BASE_NS=$(ns_per_kib "$T/A/0.log" "$T/A/1.log")
[ -n "$BASE_NS" ] || { echo "FAIL: no exchange time in the harness's report"; exit 1; }
echo "baseline: $BASE_NS ns a KiB moved (the harness's exchange, 2 runs)"
for i in $(seq 0 $((NB - 1))); do
    for c in $CPU_LEVELS; do run "$T/C$c/$i" LD_PRELOAD="$ABS_CPU" AB_INJECT_CPU="$c"; done
    for l in $DELAY_LEVELS; do
        ns=$(awk -v b="$BASE_NS" -v l="$l" 'BEGIN { printf "%.0f", b * l }')
        run "$T/D$l/$i" LD_PRELOAD="$ABS_DELAY" AB_INJECT_NS_PER_KIB="$ns"
    done
    [ $((i + 2)) -lt "$NA" ] && run "$T/A/$((i + 2))"
done
for i in $(seq $((NB + 2)) $((NA - 1))); do run "$T/A/$i"; done
made=$(($(date +%s) - start))
echo "runs made in ${made} s: $NA baseline, $NB a level of effect (iters $ITERS, max size $MAXSZ)"

# trial lists: "A-group|B-group" per line, drawn with a fixed seed
trials() { # kind k n poolB
    python3 - "$@" "$NA" <<'PY'
import random, sys
kind, k, n, nb, na = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rnd = random.Random(f"{kind}-{k}")
for _ in range(n):
    if kind == "aa":
        s = rnd.sample(range(na), 2 * k)
        print(" ".join(map(str, s[:k])) + "|" + " ".join(map(str, s[k:])))
    else:
        print(" ".join(map(str, rnd.sample(range(na), k))) + "|" +
              " ".join(map(str, rnd.sample(range(nb), k))))
PY
}

# every trial's diff --json kept as $T/j/SERIES.N.json; SERIES = kind:effect:k
mkdir -p "$T/j"
series() {
    local kind=$1 eff=$2 k=$3 ga gb args n=0 nb=$NB pool=$1
    [ "$kind" = aa ] && { pool=A; nb=$NA; }
    while IFS='|' read -r ga gb; do
        args=()
        for i in $ga; do args+=(--a "$T/A/$i.zst"); done
        for i in $gb; do args+=(--b "$T/$pool/$i.zst"); done
        "$G" diff --json "${args[@]}" >"$T/j/$kind:$eff:$k.$n.json" 2>"$T/d.err"
        local rc=$?
        [ $rc -le 1 ] || { echo "FAIL: diff exit $rc: $(head -n 3 "$T/d.err")"; exit 1; }
        n=$((n + 1))
    done < <(trials "$kind" "$k" "$([ "$kind" = aa ] && echo "$TRIALS" || echo "$PTRIALS")" "$nb")
}
for k in $KS; do
    [ $((2 * k)) -le "$NA" ] && series aa none "$k"
    [ "$k" -le "$NB" ] || continue
    for c in $CPU_LEVELS; do series "C$c" cpu "$k"; done
    for l in $DELAY_LEVELS; do series "D$l" delay "$k"; done
done

# Judges every kept diff: the detection by kind, and the conclusion against
# the rows' decisions (a contradiction is a failure in any mode).
load1=$(load)
echo "load average $load0 at the start, $load1 at the end, $cores cores"
python3 - "$T/j" "$MODE" <<'PY'
import json, os, sys, collections
jdir, mode = sys.argv[1], sys.argv[2]
G = ("application_slo", "evidence", "host_pressure")
res = collections.defaultdict(lambda: [0, 0])
contra = []
for f in sorted(os.listdir(jdir)):
    series = f.rsplit(".", 2)[0]
    kind, eff, k = series.split(":")
    d = json.load(open(os.path.join(jdir, f)))
    g = d["three_groups"]
    rows = [(gk, r) for gk in G for r in g[gk]["rows"]]
    c, rule = d["conclusion"], d["rule"]
    mv = lambda r: r["state"] in ("up", "down")
    ev = [(gk, r) for gk, r in rows if r["evidence"] and mv(r)]
    bad = []
    for gk, r in rows:
        if mv(r) and r["role"] in ("info", "waits on the peer"):
            bad.append("a row that is not evidence decided: " + r["name"])
        if r["evidence"] and mv(r) and not (r["interval_low"] > 0 or r["interval_high"] < 0):
            bad.append("%s beyond noise with an interval across 0" % r["name"])
    if "no difference" in c and (ev or g["mechanism_changed"]):
        bad.append("no difference with %d rows beyond noise" % len(ev))
    if ("slower" in c or "faster" in c) and not [1 for gk, r in ev if gk == G[0]]:
        bad.append("faster/slower with no SLO row moved")
    if "loaded more" in c and not [1 for gk, r in ev if gk == G[2] and r["state"] == "up"]:
        bad.append("host path loaded more with no host row up")
    if rule == "runbook" and not ev and not g["mechanism_changed"]:
        bad.append("an effect concluded from no row")
    if bad:
        contra.append("%s: %s (%s)" % (f, "; ".join(bad), c))
    by = {r["name"]: r for gk, r in rows}
    if eff == "cpu":
        det = by.get("CPU s per GB moved", {}).get("state") == "up" and "CPU s per GB moved +" in c
    elif eff == "delay":
        det = (by.get("data moved per data-path second (MB/s)", {}).get("state") == "down"
               and "slower" in c)
    else:
        det = rule == "no-difference"
    res[(int(k), kind, eff)][0] += int(det)
    res[(int(k), kind, eff)][1] += 1
fails = 0


def binom_tail(n, x, p):
    """P(X >= x) for X ~ Binomial(n, p)."""
    from math import comb
    return sum(comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(x, n + 1))


for (k, kind, eff), (det, tot) in sorted(res.items()):
    p = 100.0 * det / tot
    note = ""
    if kind == "aa":
        what = "A/A: concluded \"no difference\""
        # The judge states a 5 % family-wise false-alarm rate, so 40 pairs
        # give 2 false alarms on average and "at least 95 %" is missed by
        # chance in about a third of the runs.  What a run can prove is
        # that the rate is not above the stated one: fail when so many
        # false alarms would come from a 5 % rate less than once in 1,000.
        tail = binom_tail(tot, tot - det, 0.05)
        ok = tail >= 0.001
        note = "  (target >= 95 %%: %s; P(>= %d false alarms | 5 %%) = %.3g)%s" % (
            "met" if p >= 95 else "missed", tot - det, tail,
            "" if ok else "  FAIL: above the stated 5 %")
        fails += not ok
    else:
        size = float(kind[1:])
        what = "%s +%.0f %%: detected" % ("host CPU" if eff == "cpu" else "data-path latency",
                                            100 * size)
        if (eff == "cpu" and size == 1.0) or (eff == "delay" and size == 0.5):
            # Power is measured and printed against the target; it depends
            # on the machine's run-to-run noise, so it is recorded
            # (docs/results/ab-calibration.md), not a pass/fail here.
            note = "  (target >= 90 %%: %s)" % ("met" if p >= 90 else "missed")
    print("k=%-2d %-40s %3d of %3d (%3.0f %%)%s" % (k, what, det, tot, p, note))
# the smallest effect found in >= 90 % of the trials, per k and kind
for eff, name in (("cpu", "host CPU"), ("delay", "data-path latency")):
    for k in sorted({k for k, _, e in res if e == eff}):
        ok = sorted(float(kind[1:]) for (kk, kind, e), (d, t) in res.items()
                    if e == eff and kk == k and d >= 0.9 * t)
        print("k=%-2d smallest %s effect found in >= 90 %%: %s" % (
            k, name, "+%.0f %%" % (100 * ok[0]) if ok else "none of those tried"))
for x in contra:
    print("contradiction:", x)
fails += len(contra)
sys.exit(1 if fails else 0)
PY
rc=$?
echo "total $(($(date +%s) - start)) s"
[ $rc = 0 ] && echo "ok: the A/B judge calibrated ($MODE)" && exit 0
echo "FAIL: the A/B judge's calibration"
exit 1
