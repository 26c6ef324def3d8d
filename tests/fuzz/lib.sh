# SPDX-License-Identifier: Apache-2.0
# lib.sh — builds and runs one libFuzzer target; sourced by the run-fuzz*.sh
# scripts (tests/fuzz, tests/doctor), started at the repository root.
# Targets are built with clang, -fsanitize=fuzzer,address,undefined, and
# fuzzed for a bounded time from a checked-in seed corpus; new inputs go to
# OUT/corpus and reproducers to OUT/artifacts, never into the repository.
# A missing clang or libFuzzer runtime is a skip (77), not a failure.
set -u
BUILD=${BUILD:-build/default}
CLANG=${CLANG:-clang}

# fuzz_build OUT TARGET LIBS SRC...: compiles SRC... into OUT/TARGET, linked
# with LIBS (a word list).  Exits 77 without clang or its libFuzzer runtime,
# 1 (with the compiler's output) when the target does not build.
fuzz_build() {
    local out=$1 target=$2 libs=$3
    shift 3
    mkdir -p "$out/corpus" "$out/artifacts"
    command -v "$CLANG" >/dev/null || { echo "skip: clang not installed"; exit 77; }
    # shellcheck disable=SC2086 # LIBS is split on purpose
    if ! "$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -Iinclude -I. -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined -fno-omit-frame-pointer "$@" -o "$out/$target" $libs \
        >"$out/build.log" 2>&1; then
        if grep -qi 'libclang_rt.fuzzer\|cannot find.*fuzzer' "$out/build.log"; then
            echo "skip: clang's libFuzzer runtime is missing (libclang-rt-dev)"; exit 77
        fi
        cat "$out/build.log"; echo "fuzz target did not build"; exit 1
    fi
}

# fuzz_run OUT TARGET SECS WHAT SEED [OPTION...]: fuzzes OUT/TARGET for SECS
# seconds from the seed corpus folder SEED, with the extra libFuzzer
# OPTIONs (-rss_limit_mb, -max_len); WHAT names it in the progress line.
# Exits 1 when libFuzzer reports a crash, leak, timeout or sanitizer finding.
fuzz_run() {
    local out=$1 target=$2 secs=$3 what=$4 seed=$5
    shift 5
    echo "fuzzing $what for ${secs}s (seed corpus $seed)"
    "$out/$target" -max_total_time="$secs" -timeout=10 "$@" -artifact_prefix="$out/artifacts/" \
        -print_final_stats=1 "$out/corpus" "$seed" 2>&1 | tail -n 25
    local rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        echo "libFuzzer found a problem (exit $rc); reproducer in $out/artifacts/"; exit 1
    fi
    echo "fuzzing ran ${secs}s without a crash, leak or sanitizer report"
}
