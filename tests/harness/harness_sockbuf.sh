#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_sockbuf.sh — the sock transport's settings reach the data path and
# its INFO log, with data still flowing (v11 harness, every byte checked):
#  - GDRTRACE_SOCKET_SNDBUF / _RCVBUF reach every connection on both ends:
#    small pinned sizes (well under net.core.wmem_max/rmem_max, so the
#    kernel grants them doubled, its documented bookkeeping) must be what
#    every connected/accepted INFO line reports, and the "sock: using" line
#    names the sizes asked for;
#  - a receiver tries a payload recv() that would block at most once per
#    progress call (NCCL's Socket's rate; it used to be twice), from the
#    counts each comm logs when it closes;
#  - the retired variables (GDRTRACE_SOCKET_NSOCKS, _MAXRECVS, _PROGRESS,
#    _POLL_WRITABLE) set to the modes they once chose: exactly one WARN each
#    per process naming it, and all of the above unchanged.
set -u
export GDRTRACE_TRANSPORT=sock GDRTRACE_SOCKET_SNDBUF=65536 GDRTRACE_SOCKET_RCVBUF=98304
retired="GDRTRACE_SOCKET_NSOCKS=2 GDRTRACE_SOCKET_MAXRECVS=8 GDRTRACE_SOCKET_PROGRESS=all
GDRTRACE_SOCKET_POLL_WRITABLE=1"
for kv in $retired; do unset "${kv%%=*}"; done
fail=0
for run in default retired; do
    if [ "$run" = retired ]; then
        for kv in $retired; do export "${kv?}"; done
    fi
    out=$(HARNESS_ARGS="--data-only -v" "$(dirname "$0")/run_harness.sh" 11 2>&1)
    rc=$?
    lines=$(grep -E "sock: (connected to|accepted) " <<< "$out")
    want="sndbuf 131072, rcvbuf 196608"
    n=$(grep -c . <<< "$lines")
    good=$(grep -c "($want)" <<< "$lines")
    using=$(grep -c "sock: using .*sndbuf 65536, rcvbuf 98304" <<< "$out")
    # "... N would-block, ...; ... M progress calls" of each receiving comm.
    spins=$(grep "recv comm .* closed:" <<< "$out" |
        sed -nE 's/.* ([0-9]+) would-block, .* ([0-9]+) progress calls.*/\1 \2/p')
    nspin=$(grep -c . <<< "$spins")
    over=$(awk '$1 > $2' <<< "$spins" | grep -c .)
    # One WARN per retired variable per process (A and B) when set, none otherwise.
    warns=""
    for kv in $retired; do
        for p in A B; do
            w=$(grep -c "\[v11 $p\] plugin WARN: .*${kv%%=*} is retired" <<< "$out")
            [ "$run" = retired ] && expect=1 || expect=0
            [ "$w" -eq "$expect" ] || warns="$warns ${kv%%=*}: $w WARNs in process $p (want $expect);"
        done
    done
    if [ "$rc" -ne 0 ] || [ "$n" -lt 2 ] || [ "$good" -ne "$n" ] || [ "$using" -lt 1 ] ||
        [ "$nspin" -lt 2 ] || [ "$over" -ne 0 ] || [ -n "$warns" ]; then
        echo "FAIL ($run): harness exit $rc; $good of $n connection lines report ($want);" \
            "$using 'sock: using' lines name the sizes asked for; $over of $nspin receivers" \
            "had more would-block recv()s than progress calls;$warns"
        echo "$lines" | head -8
        grep "sock: using\|recv comm .* closed:\|is retired" <<< "$out" | head -12
        tail -5 <<< "$out"
        fail=1
        continue
    fi
    echo "PASS ($run): $n connections with ($want); $nspin receivers at most one" \
        "would-block recv() per progress call; retired-variable WARNs as expected;" \
        "data checked both ways"
done
exit "$fail"
