#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bw-knobs.sh — side-by-side bus bandwidth of NCCL's Socket transport and our
# plugin under different settings, interleaved, in one call (GPU machine).
# Used to choose the sock transport's defaults; results in
# docs/results/gpu-nccl.md.
#
#   bash tests/gpu/bw-knobs.sh 'ns1:GDRTRACE_SOCKET_NSOCKS=1' 'ns2:GDRTRACE_SOCKET_NSOCKS=2'
#
# Each argument is NAME:VAR=VALUE[,VAR=VALUE...] for a plugin configuration;
# "socket" (NCCL's own, no plugin) is always measured too.  Knobs:
# ROUNDS (2), OPS (broadcast,sendrecv,all_reduce), MIN (128M), MAX (1G),
# FACTOR (8).  Output: a median table per op on stdout and $OUT/knobs.md.
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
export NCCL_MNNVL_ENABLE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN
unset NCCL_NET NCCL_NET_PLUGIN GDRTRACE_DISABLE

cfgs=("socket:NCCL_NET_PLUGIN=none,NCCL_NET=Socket" "$@")
for r in $(seq 1 "$ROUNDS"); do
    for c in "${cfgs[@]}"; do
        name=${c%%:*}
        vars=${c#*:}
        [ "$name" = socket ] || vars="NCCL_NET_PLUGIN=$PLUGIN,GDRTRACE_DIR=$W/rec-$name-$r,$vars"
        mkdir -p "$W/rec-$name-$r"
        # shellcheck disable=SC2046
        env $(tr ',' ' ' <<< "$vars") timeout 300 build/gpu/nccl_check -b "${MIN:-128M}" \
            -e "${MAX:-1G}" -f "${FACTOR:-8}" -o "$OPS" > "$W/$name-$r.txt" 2>&1
        echo "round $r $name: exit $?"
    done
done
python3 - "$W" "${cfgs[@]}" <<'PY' | tee "$OUTDIR/knobs.md"
import re, statistics, sys, glob, os
w, cfgs = sys.argv[1], [c.split(":", 1)[0] for c in sys.argv[2:]]
rx = re.compile(r"^RESULT op=(\S+) bytes=(\d+) .* busbw_GBps=(\S+) errors=(-?\d+) check=(\S+)")
data = {}
for c in cfgs:
    for path in glob.glob(os.path.join(w, f"{c}-*.txt")):
        for line in open(path, errors="replace"):
            m = rx.match(line)
            if m:
                data.setdefault((m[1], int(m[2])), {}).setdefault(c, []).append(float(m[3]))
print("| op | size | " + " | ".join(cfgs) + " | " + " | ".join(f"{c} / socket" for c in cfgs[1:]) + " |")
print("|---|---:|" + "---:|" * (2 * len(cfgs) - 1))
for (op, b) in sorted(data):
    med = {c: statistics.median(v) for c, v in data[(op, b)].items()}
    cells = [f"{med[c]:.3f}" if c in med else "-" for c in cfgs]
    ratios = [f"{med[c] / med['socket']:.3f}" if c in med and "socket" in med else "-"
              for c in cfgs[1:]]
    print(f"| {op} | {b >> 20} MiB | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
PY
