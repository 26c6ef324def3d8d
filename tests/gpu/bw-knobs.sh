#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bw-knobs.sh — side-by-side bus bandwidth of NCCL's Socket transport and our
# plugin under different settings, interleaved, in one call (GPU machine).
# Used to choose the sock transport's defaults; results in
# docs/results/gpu-nccl.md.
#
#   bash tests/gpu/bw-knobs.sh 'buf4m:GDRTRACE_SOCKET_SNDBUF=4194304,GDRTRACE_SOCKET_RCVBUF=4194304'
#
# (The retired GDRTRACE_SOCKET_* modes are ignored now: docs/configuration.md.)
#
# Each argument is NAME:VAR=VALUE[,VAR=VALUE...] for a plugin configuration;
# "socket" (NCCL's own, no plugin) is always measured too.  Knobs:
# ROUNDS (2), OPS (broadcast,sendrecv,all_reduce), MIN (128M), MAX (1G),
# FACTOR (8), BUDGET_S (none: start no round after that many seconds),
# KNOB_DEBUG (1: keep NCCL's INFO log of round 1), MPS (1: under a private
# MPS daemon, tests/gpu/mps.sh), ROTATE (1, the default: round r starts with
# configuration r, so each takes every place in the order; 0: fixed order).  Output: a median table per op on stdout and $OUT/knobs.md.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUTDIR=${OUT:-$ROOT/build/gpu-out}
ROUNDS=${ROUNDS:-2}
OPS=${OPS:-broadcast,sendrecv,all_reduce}
W=$OUTDIR/knobs
mkdir -p "$W"
. tests/gpu/build.sh env
bash tests/gpu/build.sh > "$W/build.log" 2>&1 || { tail -20 "$W/build.log"; exit 1; }
PLUGIN=$ROOT/build/default/libnccl-net-gdrtrace.so
# MPS=1: both ranks' kernels run at once under a private MPS daemon instead
# of time-slicing the GPU (tests/gpu/mps.sh says why).
if [ "${MPS:-0}" = 1 ]; then
    . tests/gpu/mps.sh start "$W/mps" || exit 1
    trap 'bash tests/gpu/mps.sh stop "$W/mps"' EXIT
fi
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN
unset NCCL_NET NCCL_NET_PLUGIN GDRTRACE_DISABLE

cfgs=("socket:NCCL_NET_PLUGIN=none,NCCL_NET=Socket" "$@")
for r in $(seq 1 "$ROUNDS"); do
    # BUDGET_S: start no further round after that many seconds (a device call
    # is capped; the medians of the rounds done so far are still printed).
    if [ -n "${BUDGET_S:-}" ] && [ "$SECONDS" -ge "$BUDGET_S" ]; then
        echo "budget of ${BUDGET_S}s reached after $((r - 1)) round(s)"
        break
    fi
    # Each round starts one configuration later (ROTATE=0: always in the
    # order given), so no configuration owns a place in the order: "socket"
    # used to run first in every round.  (Run 6 of docs/results/gpu-nccl.md
    # ran Socket twice, first and third, and found no place effect.)
    order=("${cfgs[@]}")
    if [ "${ROTATE:-1}" = 1 ]; then
        k=$(((r - 1) % ${#cfgs[@]}))
        order=("${cfgs[@]:k}" "${cfgs[@]:0:k}")
    fi
    for c in "${order[@]}"; do
        name=${c%%:*}
        vars=${c#*:}
        [ "$name" = socket ] || vars="NCCL_NET_PLUGIN=$PLUGIN,GDRTRACE_DIR=$W/rec-$name-$r,$vars"
        mkdir -p "$W/rec-$name-$r"
        # shellcheck disable=SC2046
        dbg=()
        # KNOB_DEBUG=1: round 1 keeps NCCL's INFO log (graph, channels and
        # per-launch algorithm/protocol), to compare what NCCL chose per config.
        [ "${KNOB_DEBUG:-0}" = 1 ] && [ "$r" = 1 ] && dbg=(NCCL_DEBUG=INFO
            NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING,NET NCCL_DEBUG_FILE="$W/nccl-$name.%h.%p.log")
        env $(tr ',' ' ' <<< "$vars") "${dbg[@]}" timeout 300 build/gpu/nccl_check -b "${MIN:-128M}" \
            -e "${MAX:-1G}" -f "${FACTOR:-8}" -o "$OPS" > "$W/$name-$r.txt" 2>&1
        echo "round $r $name: exit $?"
    done
done
python3 - "$W" "${cfgs[@]}" <<'PY' | tee "$OUTDIR/knobs.md"
import re, statistics, sys, glob, os
w, cfgs = sys.argv[1], [c.split(":", 1)[0] for c in sys.argv[2:]]
rx = re.compile(r"^RESULT op=(\S+) bytes=(\d+) .* busbw_GBps=(\S+) errors=(-?\d+) check=(\S+)")
rx_avg = re.compile(r" busbw_avg_GBps=(\S+)")
data = {"rank 0's clock": {}, "mean of the ranks' clocks (nccl-tests)": {}}
for c in cfgs:
    for path in sorted(glob.glob(os.path.join(w, f"{c}-*.txt"))):
        for line in open(path, errors="replace"):
            m = rx.match(line)
            if not m:
                continue
            key = (m[1], int(m[2]))
            data["rank 0's clock"].setdefault(key, {}).setdefault(c, []).append(float(m[3]))
            a = rx_avg.search(line)
            if a:
                data["mean of the ranks' clocks (nccl-tests)"].setdefault(key, {}).setdefault(
                    c, []).append(float(a[1]))
for title, d in data.items():
    if not d:
        continue
    print(f"\nbus bandwidth GB/s, median of the rounds, {title}\n")
    print("| op | size | " + " | ".join(cfgs) + " | " + " | ".join(f"{c} / socket" for c in cfgs[1:]) + " | runs |")
    print("|---|---:|" + "---:|" * (2 * len(cfgs) - 1) + "---|")
    for (op, b) in sorted(d):
        med = {c: statistics.median(v) for c, v in d[(op, b)].items()}
        cells = [f"{med[c]:.3f}" if c in med else "-" for c in cfgs]
        ratios = [f"{med[c] / med['socket']:.3f}" if c in med and "socket" in med else "-"
                  for c in cfgs[1:]]
        runs = "; ".join(f"{c} " + ",".join(f"{x:.2f}" for x in d[(op, b)].get(c, [])) for c in cfgs)
        print(f"| {op} | {b >> 20} MiB | " + " | ".join(cells) + " | " + " | ".join(ratios) + f" | {runs} |")
PY
