#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh — `make demo`: two processes exchange data through the gdrtrace NCCL
# net plugin, driven exactly as NCCL drives it (tests/harness), and what
# happened is told in plain words.  Everything goes to one folder that is
# kept, $DEMO_DIR (default: $BUILD/demo), so the recorders outlive the demo
# and the commands it prints at the end can be tried on them.  Re-runnable:
# each run replaces the folder's own runs (run-a, run-b, abi-all, the logs and
# the archive) and touches nothing else; a non-empty folder that is not a
# demo folder (no .gdrtrace-demo mark) is refused.
set -u
BUILD=${BUILD:-build/default}
so="$BUILD/libnccl-net-gdrtrace.so"
harness="$BUILD/harness/harness"
for f in "$so" "$harness" "$BUILD/gdrtrace"; do
    [ -e "$f" ] || { echo "demo: $f is missing; run: make demo"; exit 1; }
done
DEMO_DIR=${DEMO_DIR:-$BUILD/demo}
mkdir -p "$DEMO_DIR" || exit 1
DEMO_DIR=$(cd "$DEMO_DIR" && pwd)
if [ ! -e "$DEMO_DIR/.gdrtrace-demo" ] && [ -n "$(ls -A "$DEMO_DIR")" ]; then
    echo "demo: $DEMO_DIR is not empty and is not a demo folder (no .gdrtrace-demo); choose"
    echo "      another DEMO_DIR, or an empty or new one"
    exit 1
fi
: >"$DEMO_DIR/.gdrtrace-demo"
rm -rf "$DEMO_DIR/run-a" "$DEMO_DIR/run-b" "$DEMO_DIR/abi-all" "$DEMO_DIR/run-a.zst" \
    "$DEMO_DIR"/demo-*.log "$DEMO_DIR/doctor.txt" "$DEMO_DIR/canary" "$DEMO_DIR/shm" "$DEMO_DIR/job.html"
tool="$(cd "$BUILD" && pwd)/gdrtrace"
harness="$(cd "$BUILD" && pwd)/harness/harness"
A="$DEMO_DIR/run-a"
B="$DEMO_DIR/run-b"
mkdir -p "$A" "$B" "$DEMO_DIR/abi-all"

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
"$harness" --abi 11 --data-only --iters 30 --max-size 16M --dir "$A" >"$log" 2>&1
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
echo "3. What the flight recorder saw. Each process left a recorder file behind, in"
echo "   $A (GDRTRACE_DIR; a job's default is /dev/shm), that outlives it:"
"$tool" ls "$A" | sed 's/^/     /'
echo
echo "   gdrtrace verdict: did the transfers use the direct GPU<->NIC path?"
"$tool" verdict "$A" | sed 's/^/     /'
vrc=${PIPESTATUS[0]}
echo "   (exit code $vrc.) The demo registers host buffers over TCP, exactly what NCCL does"
echo "   when there is no GPU Direct: HOST-STAGED is the truth here, and a canary job that"
echo "   ran 'gdrtrace verdict --expect dmabuf' would have failed on it:"
"$tool" verdict --expect dmabuf "$A" >/dev/null
echo "     gdrtrace verdict --expect dmabuf -> exit $?"
if [ "$vrc" -ne 11 ]; then
    echo "   FAILED: expected HOST-STAGED (exit 11), got exit $vrc"
    exit 1
fi
echo
echo "   gdrtrace summary --full (one process, its communicator): what NCCL asked for,"
echo "   what the plugin did, and how long each operation took:"
first=$(ls "$A"/gdrtrace.*.rec | head -n 1)
# the first communicator's section, up to its histograms
"$tool" summary --full "$first" | awk '/^   comm 0x/ { on = 1 } on && /^     histogram/ { exit } on' |
    sed 's/^/  /' | head -n 40
echo
echo "4. A post-mortem archive: every subcommand reads it like the live files."
"$tool" dump -o "$DEMO_DIR/run-a.zst" "$A" | sed 's/^/     /'
echo "     gdrtrace verdict run-a.zst:"
# its "all" line with the lines it wraps onto
"$tool" verdict "$DEMO_DIR/run-a.zst" | awk '/^all / { on = 1; print; next } on && /^ / { print; next } { on = 0 }' |
    sed 's/^/     /'
echo
echo "5. An A/B run, as the runbook asks: the same exchange with GDRTRACE_REG=host"
echo "   instead of the default dmabuf, then gdrtrace diff. Only the registration"
echo "   policy differs, so there must be no 'not comparable' warning:"
GDRTRACE_REG=host "$harness" --abi 11 --data-only --iters 30 --max-size 16M --dir "$B" \
    >"$DEMO_DIR/demo-b.log" 2>&1 || { echo "   FAILED: run B"; tail -n 20 "$DEMO_DIR/demo-b.log"; exit 1; }
# the runs, the method mix and fallbacks, then diff's conclusion (the latency
# tables and the side-by-side groups: gdrtrace diff A B, printed at the end)
"$tool" diff "$A" "$B" >"$DEMO_DIR/demo-diff.txt" 2>&1
drc=$?
awk '/^latency/ { cut = 1 } !cut; /^conclusion/ && cut { print "   ... latency per operation, side by side: gdrtrace diff (below)"; print }' \
    "$DEMO_DIR/demo-diff.txt" | sed 's/^/     /'
echo "   (gdrtrace diff exit code $drc: 0 means the runs are comparable. One run a side says"
echo "    nothing about noise, so diff judges no effect; an A/B repeats the runs, interleaved:"
echo "    gdrtrace diff --a A1 --a A2 --a A3 --b B1 --b B2 --b B3, docs/diff.md)"
[ "$drc" -eq 0 ] || { echo "   FAILED: diff found differences beyond the registration path"; exit 1; }
echo
echo "6. This node's evidence for the runbook's gates 0-2 (gdrtrace doctor):"
"$tool" doctor >"$DEMO_DIR/doctor.txt" 2>&1
echo "     exit $? - $(grep '^Summary' "$DEMO_DIR/doctor.txt")"
echo "     (no GPU or RDMA NIC here, so the GPU gates fail or are skipped, and doctor says so;"
echo "      the full report is 'gdrtrace doctor', the evidence bundle 'gdrtrace doctor --json')"
echo
echo "7. The same exchange, briefly, through every ABI version the plugin exports:"
log="$DEMO_DIR/demo-abi-all.log"
"$harness" --abi all --data-only --iters 6 --max-size 1M --dir "$DEMO_DIR/abi-all" >"$log" 2>&1
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
echo "8. One command for a canary job: gdrtrace run loads the plugin, keeps the recorders"
echo "   node-local, has NCCL's log written beside them, runs the job, archives both into"
echo "   --dir and prints the verdict (here the harness stands in for the training job):"
mkdir -p "$DEMO_DIR/canary" "$DEMO_DIR/shm"
log="$DEMO_DIR/demo-run.log"
GDRTRACE_DIR="$DEMO_DIR/shm" GDRTRACE_JOB=demo "$tool" run --expect host --dir "$DEMO_DIR/canary" -- \
    "$harness" --abi 12 --data-only --iters 4 --max-size 256K >"$log" 2>&1
rc=$?
grep -E "^(all|comm) " "$log" | sed 's/^/     /'
echo "     exit $rc (--expect host met: 0; a canary would pass --expect dmabuf and fail here)"
echo "     archived: $(cd "$DEMO_DIR/canary" && ls | tr '\n' ' ')"
[ $rc -eq 0 ] || { tail -n 20 "$log" | sed 's/^/     /'; exit 1; }
echo
echo "Demo finished: the plugin loads, connects two processes and moves data intact, and"
echo "the recorders it left behind say - live, archived, or compared - how memory was registered."
echo
echo "Everything is kept in $DEMO_DIR:"
echo "  run-a/, run-b/  recorders of the two runs     run-a.zst  the archive of run A"
echo "  abi-all/        recorders of step 7            demo-*.log, doctor.txt  what the programs said"
echo "  canary/         step 8's archive and NCCL-style logs"
echo "(make demo again replaces these runs.)  Try next, with the gdrtrace just built:"
echo "  $tool verdict $A"
echo "  $tool summary --events $A"
echo "  $tool summary --json $DEMO_DIR/run-a.zst"
echo "  $tool diff $A $B"
echo "  $tool export --prometheus --exited-within 1w $DEMO_DIR/abi-all"
echo "      (by default the export leaves out recorders that exited over 15 min ago: a"
echo "       finished job's series go stale in Prometheus; --exited-within widens that)"
echo "  $tool watch --all --count 1 $DEMO_DIR/abi-all"
echo "  $tool verdict --nccl-log $DEMO_DIR/canary $DEMO_DIR/canary"
echo "  $tool report -o $DEMO_DIR/job.html $A"
echo "  $tool report -o $DEMO_DIR/ab.html --baseline $A $B"
echo "  $tool doctor"
echo "  $tool --help; man -l $(cd "$BUILD" && pwd)/man/gdrtrace.1"
echo "Installed (make install, or make deb), it is plain 'gdrtrace', and NCCL loads the"
echo "plugin with NCCL_NET_PLUGIN=gdrtrace."
