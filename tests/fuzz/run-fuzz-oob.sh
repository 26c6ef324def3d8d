#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz-oob.sh — builds the out-of-band hello / ib setup-message libFuzzer
# target (tests/fuzz/fuzz_oob.c; clang, -fsanitize=fuzzer,address,undefined)
# and fuzzes it for GDRTRACE_FUZZ_SECONDS (default 30) from the checked-in
# seed corpus tests/fuzz/oob-corpus; new inputs go to $BUILD/fuzz-oob/corpus,
# never into the repository.  Passes when libFuzzer finds no crash, leak,
# timeout or sanitizer report; skips (77) without clang's libFuzzer runtime.
set -u
BUILD=${BUILD:-build/default}
secs=${GDRTRACE_FUZZ_SECONDS:-30}
out=$BUILD/fuzz-oob
mkdir -p "$out/corpus" "$out/artifacts"
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null; then echo "skip: clang not installed"; exit 77; fi
# The sources as the build lists them for fuzz_oob_replay (tests/fuzz/module.mk),
# so this script cannot fall behind when a file joins ib or plugin/oob.
libs=$(make -s --no-print-directory \
    --eval='gt-print-oob-srcs: ; @echo $(filter-out tests/fuzz/replay.c,$(fuzz_oob_replay_SRCS))' \
    gt-print-oob-srcs) || { echo "cannot get fuzz_oob_replay_SRCS from make"; exit 1; }
srcs="$libs"
if ! "$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -Iinclude -I. -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer $srcs -o "$out/fuzz_oob" -ldl -lpthread \
    >"$out/build.log" 2>&1; then
    if grep -qi 'libclang_rt.fuzzer\|cannot find.*fuzzer' "$out/build.log"; then
        echo "skip: clang's libFuzzer runtime is missing (libclang-rt-dev)"; exit 77
    fi
    cat "$out/build.log"; echo "fuzz target did not build"; exit 1
fi
echo "fuzzing the out-of-band hello and ib setup parsers for ${secs}s (seed corpus tests/fuzz/oob-corpus)"
"$out/fuzz_oob" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" tests/fuzz/oob-corpus 2>&1 |
    tail -n 25
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
    echo "libFuzzer found a problem (exit $rc); reproducer in $out/artifacts/"; exit 1
fi
echo "fuzzing ran ${secs}s without a crash, leak or sanitizer report"
