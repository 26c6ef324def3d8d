#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_sockbuf.sh — GDRTRACE_SOCKET_SNDBUF / _RCVBUF reach every socket of
# a sock connection, on both ends, and data still flows: the v11 harness runs
# with small pinned sizes (well under net.core.wmem_max/rmem_max, so the
# kernel grants them doubled, its documented bookkeeping) and every
# connected/accepted INFO line must report exactly those sizes.
set -u
export GDRTRACE_TRANSPORT=sock GDRTRACE_SOCKET_SNDBUF=65536 GDRTRACE_SOCKET_RCVBUF=98304
out=$(HARNESS_ARGS="--data-only -v" "$(dirname "$0")/run_harness.sh" 11 2>&1)
rc=$?
lines=$(grep -E "sock: (connected to|accepted) " <<< "$out")
want="sndbuf 131072, rcvbuf 196608"
n=$(grep -c . <<< "$lines")
good=$(grep -c "($want)" <<< "$lines")
if [ "$rc" -ne 0 ] || [ "$n" -lt 2 ] || [ "$good" -ne "$n" ]; then
    echo "FAIL: harness exit $rc; $good of $n connection lines report ($want):"
    echo "$lines" | head -8
    tail -5 <<< "$out"
    exit 1
fi
echo "PASS: $n connections with ($want); data checked both ways"
