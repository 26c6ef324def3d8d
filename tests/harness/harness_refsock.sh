#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# harness_refsock.sh — the GPU runbook's reference plugins stay correct here,
# where CI runs: tests/gpu/refsock_plugin.c (NCCL Socket's data path shape,
# measured against ours in tests/gpu/bw-knobs.sh) is built and driven by the
# v11 harness in each of its modes (two send()s per message, one fused
# sendmsg(), pass-through with rewritten properties, and standalone with
# NCCL Socket's own properties), every byte checked;
# tests/gpu/regcount_plugin.c (the registration witness) is built and must
# pass the same data run with our plugin inside it.
set -u
BUILD=${BUILD:-build/default}
bin="$BUILD/harness/harness"
so="$BUILD/libnccl-net-gdrtrace.so"
[ -x "$bin" ] && [ -f "$so" ] || { echo "FAIL: $bin or $so is not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/gdrtrace-refsock.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
export GDRTRACE_DIR=$work/rec GDRTRACE_TRANSPORT=sock
mkdir -p "$GDRTRACE_DIR"
if ! bash tests/gpu/build-plugins.sh "$work" 2>&1; then
    echo "FAIL: the GPU runbook's helper plugins do not build"
    exit 1
fi
fail=0
run() {
    local what=$1 plugin=$2
    shift 2
    if out=$(env "$@" "$bin" --abi 11 --data-only --plugin "$plugin" 2>&1); then
        echo "PASS: $what"
    else
        echo "FAIL: $what"
        tail -5 <<< "$out"
        fail=1
    fi
}
run "refsock, size and payload in two send()s" "$work/libnccl-net-refsock.so" GT_REFSOCK_INNER="$PWD/$so"
run "refsock, fused sendmsg()" "$work/libnccl-net-refsock.so" GT_REFSOCK_INNER="$PWD/$so" GT_REFSOCK_FUSE=1
run "refsock pass-through, maxP2pBytes/maxCollBytes 1 TiB" "$work/libnccl-net-refsock.so" \
    GT_REFSOCK_INNER="$PWD/$so" GT_REFSOCK_PASSTHRU=1 GT_REFSOCK_MAXBYTES=1099511627776
run "refsock standalone (own init and properties, no inner plugin)" "$work/libnccl-net-refsock.so" \
    GT_REFSOCK_INNER=
run "refsock standalone, test() moves nothing posted after the request tested" \
    "$work/libnccl-net-refsock.so" GT_REFSOCK_INNER= GT_REFSOCK_ONE=1
run "refsock standalone, tested only, fused, 24-byte header (our sock's wire)" \
    "$work/libnccl-net-refsock.so" GT_REFSOCK_INNER= GT_REFSOCK_ONE=1 GT_REFSOCK_FUSE=1 GT_REFSOCK_HDR=24
mkdir -p "$work/rc"
run "regcount witness around the plugin" "$work/libnccl-net-regcount.so" \
    GT_REGCOUNT_INNER="$PWD/$so" GT_REGCOUNT_DIR="$work/rc"
if [ "$fail" = 0 ] && ! grep -qs "reg_host [1-9]" "$work"/rc/regcount.*.txt; then
    echo "FAIL: the witness counted no host registration:"
    cat "$work"/rc/regcount.*.txt 2> /dev/null | head -5
    fail=1
fi
exit "$fail"
