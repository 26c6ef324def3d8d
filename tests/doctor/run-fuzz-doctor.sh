#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz-doctor.sh — fuzzes `doctor --compare`'s reader (tests/doctor/
# fuzz_doctor_json.c: any bytes as another node's bundle; a document equals
# itself) with clang's libFuzzer + ASan/UBSan for GDRTRACE_DOCTOR_FUZZ_SECONDS
# (default 10), from the checked-in corpus tests/doctor/fuzz-corpus; new inputs
# go to $BUILD/fuzz-doctor, never into the repository.  Passes when libFuzzer
# reports no crash, leak, timeout or sanitizer finding; skips (77) without
# clang or its libFuzzer runtime.
set -u
BUILD=${BUILD:-build/default}
secs=${GDRTRACE_DOCTOR_FUZZ_SECONDS:-10}
out=$BUILD/fuzz-doctor
mkdir -p "$out/corpus" "$out/artifacts"
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "skip: clang not installed"; exit 77; }
srcs="tests/doctor/fuzz_doctor_json.c tools/doctor/json.c tools/doctor/compare.c
      tools/doctor/inventory.c common/fingerprint.c"
if ! "$CLANG" -std=c11 -g -O1 -D_GNU_SOURCE -Iinclude -I. -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer $srcs -o "$out/fuzz_doctor_json" -ldl \
    >"$out/build.log" 2>&1; then
    if grep -qi 'libclang_rt.fuzzer\|cannot find.*fuzzer' "$out/build.log"; then
        echo "skip: clang's libFuzzer runtime is missing (libclang-rt-dev)"; exit 77
    fi
    cat "$out/build.log"; echo "fuzz target did not build"; exit 1
fi
echo "fuzzing doctor's --compare reader for ${secs}s (seed corpus tests/doctor/fuzz-corpus)"
"$out/fuzz_doctor_json" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -max_len=65536 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "$out/corpus" tests/doctor/fuzz-corpus 2>&1 |
    tail -n 15
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { echo "libFuzzer found a problem (exit $rc); reproducer in $out/artifacts/"; exit 1; }
echo "fuzzing ran ${secs}s without a crash, leak or sanitizer report"
