#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz-oob.sh — builds the out-of-band hello / ib setup-message libFuzzer
# target (tests/fuzz/fuzz_oob.c; clang, -fsanitize=fuzzer,address,undefined)
# and fuzzes it for GDRTRACE_FUZZ_SECONDS (default 30) from the checked-in
# seed corpus tests/fuzz/oob-corpus; new inputs go to $BUILD/fuzz-oob/corpus,
# never into the repository.  Passes when libFuzzer finds no crash, leak,
# timeout or sanitizer report; skips (77) without clang's libFuzzer runtime.
. "$(dirname "$0")/lib.sh"
out=$BUILD/fuzz-oob
# The sources as the build lists them for fuzz_oob_replay (tests/fuzz/module.mk),
# so this script cannot fall behind when a file joins ib or plugin/oob.
srcs=$(make -s --no-print-directory \
    --eval='gt-print-oob-srcs: ; @echo $(filter-out tests/fuzz/replay.c,$(fuzz_oob_replay_SRCS))' \
    gt-print-oob-srcs) || { echo "cannot get fuzz_oob_replay_SRCS from make"; exit 1; }
# shellcheck disable=SC2086 # a list of paths
fuzz_build "$out" fuzz_oob "-ldl -lpthread" $srcs
fuzz_run "$out" fuzz_oob "${GDRTRACE_FUZZ_SECONDS:-30}" \
    "the out-of-band hello and ib setup parsers" tests/fuzz/oob-corpus -rss_limit_mb=2048 -max_len=4096
