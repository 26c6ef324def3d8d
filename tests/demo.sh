#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh — `make demo`: two processes exchange data through the gdrtrace NCCL
# net plugin, driven exactly as NCCL drives it (tests/harness), and what
# happened is told in plain words.  Recorders (once the recorder lands) go to
# a fresh folder, $DEMO_DIR (kept when set by the caller, else removed).
set -u
BUILD=${BUILD:-build/default}
so="$BUILD/libnccl-net-gdrtrace.so"
harness="$BUILD/harness/harness"
for f in "$so" "$harness"; do
    [ -e "$f" ] || { echo "demo: $f is missing; run: make demo"; exit 1; }
done
keep=${DEMO_DIR:+1}
DEMO_DIR=${DEMO_DIR:-$(mktemp -d /tmp/gdrtrace-demo.XXXXXX)}
mkdir -p "$DEMO_DIR"
[ -n "$keep" ] || trap 'rm -rf "$DEMO_DIR"' EXIT

echo "gdrtrace demo"
echo "============="
syms=$(nm -D --defined-only "$so" 2>/dev/null | awk '{print $3}' | sort -V | tr '\n' ' ')
echo "1. The plugin: $so"
echo "   It offers NCCL these entry points: ${syms:-?}"
echo "   (NCCL 2.13 ... 2.30 each pick the newest one they know.)"
echo
echo "2. Two processes load it the way NCCL 2.28 does (ABI v11), connect to each"
echo "   other over TCP and send each other messages of random sizes at once."
log="$DEMO_DIR/demo-harness.log"
"$BUILD/harness/harness" --abi 11 --data-only --iters 30 --max-size 16M --dir "$DEMO_DIR" \
    >"$log" 2>&1
rc=$?
why=$(sed -n 's/.*plugin says: NET\/gdrtrace : //p' "$log" | head -n 1)
dev=$(sed -n 's/.*\[v11 A\] device 0: //p' "$log" | head -n 1)
if [ -n "$why" ]; then
    echo "   The plugin said: $why"
fi
[ -n "$dev" ] && echo "   Network device used: $dev"
for who in A B; do
    line=$(grep "\[v11 $who\] moved" "$log" | head -n 1)
    [ -n "$line" ] || continue
    # "moved N messages (X MiB) out and M (Y MiB, ...) in, in T s; ..."
    read -r sent smib recv rmib secs < <(echo "$line" |
        sed -E 's/.*moved ([0-9]+) messages \(([0-9.]+) MiB\) out and ([0-9]+) \(([0-9.]+) MiB.* in, in ([0-9.]+) s.*/\1 \2 \3 \4 \5/')
    echo "   Process $who sent $sent messages ($smib MiB) and received $recv ($rmib MiB) in $secs s."
done
if [ $rc -eq 0 ]; then
    echo "   Every byte and every message size was checked on arrival: OK."
else
    echo "   FAILED (exit $rc). The harness said:"
    tail -n 20 "$log" | sed 's/^/     /'
    exit $rc
fi
echo
echo "3. The same exchange, briefly, through every ABI version the plugin exports:"
"$harness" --abi all --data-only --iters 6 --max-size 1M --dir "$DEMO_DIR" >"$log" 2>&1
rc=$?
for v in 6 7 8 9 10 11 12; do
    if grep -q "^\[v$v\] data: .*passed" "$log"; then
        echo "   ncclNetPlugin_v$v: data exchanged and checked, OK"
    else
        echo "   ncclNetPlugin_v$v: FAILED"
    fi
done
[ $rc -eq 0 ] || { tail -n 20 "$log" | sed 's/^/     /'; exit $rc; }
echo
echo "Demo finished: the plugin loads, connects two processes and moves data intact."
