#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz-oob.sh — builds the libFuzzer targets of what a network peer
# sends (clang, -fsanitize=fuzzer,address,undefined): the out-of-band hello
# and ib's setup message (tests/fuzz/fuzz_oob.c, seeds tests/fuzz/oob-corpus)
# and sock's control stream (tests/fuzz/fuzz_sock.c, seeds
# tests/fuzz/sock-corpus), and fuzzes each for GDRTRACE_FUZZ_SECONDS
# (default 30); new inputs go to $BUILD/fuzz-oob/corpus and
# $BUILD/fuzz-sock/corpus, never into the repository.  Passes when libFuzzer finds no crash, leak,
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

# sock's control stream, from fuzz_sock_replay's sources the same way.
out=$BUILD/fuzz-sock
srcs=$(make -s --no-print-directory \
    --eval='gt-print-sock-srcs: ; @echo $(filter-out tests/fuzz/replay.c,$(fuzz_sock_replay_SRCS))' \
    gt-print-sock-srcs) || { echo "cannot get fuzz_sock_replay_SRCS from make"; exit 1; }
# shellcheck disable=SC2086 # a list of paths
fuzz_build "$out" fuzz_sock "-lpthread" $srcs
fuzz_run "$out" fuzz_sock "${GDRTRACE_FUZZ_SECONDS:-30}" \
    "the sock control-stream parser" tests/fuzz/sock-corpus -rss_limit_mb=2048 -max_len=70000
