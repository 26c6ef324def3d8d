#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz.sh — builds the reader's libFuzzer target (clang,
# -fsanitize=fuzzer,address,undefined) and fuzzes it for a bounded time
# (GDRTRACE_FUZZ_SECONDS, default 30; CI may raise it) starting from the checked-in seed
# corpus; new inputs go to $BUILD/fuzz/corpus, never into the repository.
# Passes when libFuzzer finds no crash, leak, timeout or sanitizer report;
# skips (77) when clang's libFuzzer runtime is not installed.
set -u
BUILD=${BUILD:-build/default}
secs=${GDRTRACE_FUZZ_SECONDS:-30}
out=$BUILD/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
CLANG=${CLANG:-clang}
if ! command -v "$CLANG" >/dev/null; then echo "skip: clang not installed"; exit 77; fi
# The reader's sources as the build lists them (tools/module.mk), so this
# script cannot fall behind when a file joins the reader.
# (with common's base: inputs.c reads its variable through common/env.c)
reader=$(make -s --no-print-directory \
    --eval='gt-print-reader-srcs: ; @echo $(sort $(READER_SRCS) $(BASE_SRCS))' \
    gt-print-reader-srcs) || { echo "cannot get READER_SRCS from make"; exit 1; }
srcs="tests/fuzz/fuzz_recfile.c $reader"
if ! "$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -Iinclude -I. -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer $srcs -o "$out/fuzz_recfile" -lzstd -lm \
    >"$out/build.log" 2>&1; then
    if grep -qi 'libclang_rt.fuzzer\|cannot find.*fuzzer' "$out/build.log"; then
        echo "skip: clang's libFuzzer runtime is missing (libclang-rt-dev)"; exit 77
    fi
    cat "$out/build.log"; echo "fuzz target did not build"; exit 1
fi
echo "fuzzing the reader for ${secs}s (seed corpus tests/fuzz/corpus)"
"$out/fuzz_recfile" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=300000 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" tests/fuzz/corpus 2>&1 |
    tail -n 25
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
    echo "libFuzzer found a problem (exit $rc); reproducer in $out/artifacts/"; exit 1
fi
echo "fuzzing ran ${secs}s without a crash, leak or sanitizer report"
