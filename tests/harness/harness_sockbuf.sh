#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_sockbuf.sh — the sock transport's settings reach the data path and
# its INFO log, with data still flowing (v11 harness, every byte checked):
#  - GDRTRACE_SOCKET_SNDBUF / _RCVBUF reach every socket of a connection on
#    both ends: small pinned sizes (well under net.core.wmem_max/rmem_max, so
#    the kernel grants them doubled, its documented bookkeeping) must be what
#    every connected/accepted INFO line reports;
#  - GDRTRACE_SOCKET_PROGRESS: the default is "tested", "all" is honoured,
#    and the "sock: using" line says which one ran.
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
    if [ "$rc" -ne 0 ] || [ "$n" -lt 2 ] || [ "$good" -ne "$n" ] || [ "$using" -lt 1 ]; then
        echo "FAIL ($scope progress): harness exit $rc; $good of $n connection lines report" \
            "($want); $using 'sock: using' lines say 'progress $expect':"
        echo "$lines" | head -8
        grep "sock: using" <<< "$out" | head -2
        tail -5 <<< "$out"
        fail=1
        continue
    fi
    echo "PASS ($scope progress): $n connections with ($want), progress $expect; data checked both ways"
done
exit "$fail"
