#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz.sh — builds the reader's libFuzzer target (clang,
# -fsanitize=fuzzer,address,undefined) and fuzzes it for a bounded time
# (GDRTRACE_FUZZ_SECONDS, default 30; CI may raise it) starting from the checked-in seed
# corpus; new inputs go to $BUILD/fuzz/corpus, never into the repository.
# Passes when libFuzzer finds no crash, leak, timeout or sanitizer report;
# skips (77) when clang's libFuzzer runtime is not installed.
. "$(dirname "$0")/lib.sh"
out=$BUILD/fuzz
# The reader's sources as the build lists them (tools/module.mk), so this
# script cannot fall behind when a file joins the reader.
# (with common's base: inputs.c reads its variable through common/env.c)
reader=$(make -s --no-print-directory \
    --eval='gt-print-reader-srcs: ; @echo $(sort $(READER_SRCS) $(BASE_SRCS))' \
    gt-print-reader-srcs) || { echo "cannot get READER_SRCS from make"; exit 1; }
# shellcheck disable=SC2086 # a list of paths
fuzz_build "$out" fuzz_recfile "-lzstd -lm" tests/fuzz/fuzz_recfile.c $reader
fuzz_run "$out" fuzz_recfile "${GDRTRACE_FUZZ_SECONDS:-30}" "the reader" tests/fuzz/corpus \
    -rss_limit_mb=2048 -max_len=300000

# NCCL's log (verdict --nccl-log): the reader and its join, the same sources.
out=$BUILD/fuzz-nccllog
# shellcheck disable=SC2086 # a list of paths
fuzz_build "$out" fuzz_nccllog "-lzstd -lm" tests/fuzz/fuzz_nccllog.c $reader
fuzz_run "$out" fuzz_nccllog "${GDRTRACE_FUZZ_SECONDS:-30}" "the NCCL log reader" \
    tests/fuzz/nccllog-corpus -rss_limit_mb=2048 -max_len=65536
