#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# 80-conform.sh — NCCL's call patterns (gdrtrace-conform, docs/conformance.md)
# against the ib transport on real kernel verbs: every connection on rxe0
# (both ends, across processes in two-nodes), maxRecvs 8, so the grouped,
# repeated-tags and shared-senders patterns ask ib what NCCL's PXN path
# asks; then with 2 QPs per connection.  Busybox sh; exit 0 pass, 77 skip,
# else fail.
command -v gdrtrace-conform >/dev/null 2>&1 || { echo "gdrtrace-conform not in PATH"; exit 77; }
fail=0
mkdir -p /tmp/rec-conform
for qps in 1 2; do
    if env GDRTRACE_TRANSPORT=ib GDRTRACE_DIR=/tmp/rec-conform NCCL_IB_HCA==rxe0 \
        NCCL_IB_QPS_PER_CONNECTION=$qps \
        gdrtrace-conform -v --timeout 60 /gt/bin/libnccl-net-gdrtrace.so >/tmp/conform.log 2>&1; then
        echo "ok   conform-ib-qps$qps: $(tail -n 1 /tmp/conform.log)"
        grep -q '^PASS shared-senders' /tmp/conform.log ||
            { echo "FAIL conform-ib-qps$qps: shared-senders did not run (maxRecvs?)"; fail=1; }
    else
        echo "FAIL conform-ib-qps$qps"
        cat /tmp/conform.log
        fail=1
    fi
done
exit $fail
