#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_sockbuf.sh — the sock transport's settings reach the data path and
# its INFO log, with data still flowing (v11 harness, every byte checked):
#  - GDRTRACE_SOCKET_SNDBUF / _RCVBUF reach every socket of a connection on
#    both ends: small pinned sizes (well under net.core.wmem_max/rmem_max, so
#    the kernel grants them doubled, its documented bookkeeping) must be what
#    every connected/accepted INFO line reports;
#  - GDRTRACE_SOCKET_PROGRESS: the default is "tested", "all" is honoured,
#    and the "sock: using" line says which one ran;
#  - a receiver with no data sockets tries a payload recv() that would block
#    at most once per progress call (NCCL's Socket's rate; it used to be
#    twice), from the counts each comm logs when it closes.
set -u
export GDRTRACE_TRANSPORT=sock GDRTRACE_SOCKET_SNDBUF=65536 GDRTRACE_SOCKET_RCVBUF=98304
unset GDRTRACE_SOCKET_PROGRESS
fail=0
for scope in default all; do
    if [ "$scope" = all ]; then
        export GDRTRACE_SOCKET_PROGRESS=all
        expect=all
    else
        expect=tested
    fi
    out=$(HARNESS_ARGS="--data-only -v" "$(dirname "$0")/run_harness.sh" 11 2>&1)
    rc=$?
    lines=$(grep -E "sock: (connected to|accepted) " <<< "$out")
    want="sndbuf 131072, rcvbuf 196608"
    n=$(grep -c . <<< "$lines")
    good=$(grep -c "($want)" <<< "$lines")
    using=$(grep -c "sock: using .*progress $expect," <<< "$out")
    # "... N would-block, ...; ... M progress calls" of each receiving comm.
    spins=$(grep "recv comm .* closed:" <<< "$out" |
        sed -nE 's/.* ([0-9]+) would-block, .* ([0-9]+) progress calls.*/\1 \2/p')
    nspin=$(grep -c . <<< "$spins")
    over=$(awk '$1 > $2' <<< "$spins" | grep -c .)
    if [ "$rc" -ne 0 ] || [ "$n" -lt 2 ] || [ "$good" -ne "$n" ] || [ "$using" -lt 1 ] ||
        [ "$nspin" -lt 2 ] || [ "$over" -ne 0 ]; then
        echo "FAIL ($scope progress): harness exit $rc; $good of $n connection lines report" \
            "($want); $using 'sock: using' lines say 'progress $expect'; $over of $nspin" \
            "receivers had more would-block recv()s than progress calls:"
        echo "$lines" | head -8
        grep "sock: using\|recv comm .* closed:" <<< "$out" | head -4
        tail -5 <<< "$out"
        fail=1
        continue
    fi
    echo "PASS ($scope progress): $n connections with ($want), progress $expect;" \
        "$nspin receivers at most one would-block recv() per progress call; data checked both ways"
done
exit "$fail"
