#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# inner_harness.sh — checks the `inner` transport: gdrtrace loads another net
# plugin (GDRTRACE_INNER) and forwards every call to it.
#  1. Through the stand-in plugin's v11 and its v8 table (GDRTRACE_INNER_VERSION),
#     the NCCL-like harness moves data both ways, every byte checked, with
#     gdrtrace itself driven through ABI v11 and v8.
#  2. Misconfigurations fail the plugin's init with a WARN that names the
#     problem (missing GDRTRACE_INNER, a path that does not load, gdrtrace
#     itself as the inner plugin) instead of crashing or hanging.
set -u
BUILD=${BUILD:-build/default}
harness="$BUILD/harness/harness"
fake="$BUILD/tests/libnccl-net-fakeinner.so"
plugin="$BUILD/libnccl-net-gdrtrace.so"
for f in "$harness" "$fake" "$plugin"; do
    [ -e "$f" ] || { echo "FAIL: $f is not built"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export GDRTRACE_TRANSPORT=inner GDRTRACE_DIR="$tmp" GDRTRACE_SOCKET_IFNAME=lo

for inner_v in 11 8; do
    for outer_v in 11 8; do
        log="$tmp/data-$inner_v-$outer_v.log" dir="$tmp/rec-$inner_v-$outer_v"
        mkdir -p "$dir"
        if GDRTRACE_INNER="$fake" GDRTRACE_INNER_VERSION=$inner_v GDRTRACE_DIR="$dir" \
            "$harness" --abi $outer_v --data-only --iters 20 --max-size 4M >"$log" 2>&1; then
            echo "ok: data through the inner plugin's v$inner_v, gdrtrace driven as v$outer_v"
        else
            echo "FAIL: inner v$inner_v / outer v$outer_v"; tail -n 20 "$log"; fail=1
        fi
        # The recorder must say which transport and which inner ABI carried it.
        sum=$("$BUILD/gdrtrace" summary --full "$dir" 2>&1)
        if grep -q "transport inner" <<<"$sum" && grep -q "inner plugin v$inner_v " <<<"$sum"; then
            echo "ok: the recorder names the inner transport and its v$inner_v ABI"
        else
            echo "FAIL: the recorder does not show inner v$inner_v"; head -n 30 <<<"$sum"; fail=1
        fi
    done
done

# Misconfigurations: init must fail cleanly with a message naming the problem.
expect_init_failure() {
    local what=$1 pattern=$2; shift 2
    local log="$tmp/bad.log"
    env "$@" "$harness" --abi 11 --data-only --iters 1 >"$log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ]; then
        echo "FAIL: $what: the harness passed although the inner plugin is unusable"; fail=1
    elif grep -q -- "$pattern" "$log"; then
        echo "ok: $what: refused with '$pattern'"
    else
        echo "FAIL: $what: no message matching '$pattern' (rc=$rc)"; tail -n 15 "$log"; fail=1
    fi
    if grep -q -E "Segmentation|Aborted|AddressSanitizer" "$log"; then
        echo "FAIL: $what crashed"; fail=1
    fi
}
expect_init_failure "GDRTRACE_INNER unset" "needs GDRTRACE_INNER" -u GDRTRACE_INNER
expect_init_failure "GDRTRACE_INNER not loadable" "could not be loaded" GDRTRACE_INNER="$tmp/nope.so"
cp "$plugin" "$tmp/libnccl-net-copy.so"
expect_init_failure "gdrtrace as its own inner plugin" "is gdrtrace itself" \
    GDRTRACE_INNER="$tmp/libnccl-net-copy.so"
exit $fail
