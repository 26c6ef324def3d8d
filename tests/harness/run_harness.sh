#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_harness.sh VERSION — runs the NCCL-like harness (tests/harness/harness.c)
# against $BUILD/libnccl-net-gdrtrace.so through ncclNetPlugin_v<VERSION>:
# two processes exchanging random-size messages both ways with every byte
# checked, then the bad-input cases (corrupt handles, garbage from the peer,
# a peer dying mid-message).  HARNESS_ARGS adds options (see harness --help).
set -u
BUILD=${BUILD:-build/default}
bin="$BUILD/harness/harness"
if [ ! -x "$bin" ]; then
    echo "FAIL: $bin is not built (make tests builds it)"
    exit 1
fi
# Recorders go to a private folder (not /dev/shm) unless the caller chose one.
if [ -z "${GDRTRACE_DIR:-}" ]; then
    GDRTRACE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/gdrtrace-harness.XXXXXX") || exit 1
    export GDRTRACE_DIR
    trap 'rm -rf "$GDRTRACE_DIR"' EXIT
fi
# shellcheck disable=SC2086
"$bin" --abi "$1" ${HARNESS_ARGS:-}
