#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-fuzz-doctor.sh — fuzzes `doctor --compare`'s reader (tests/doctor/
# fuzz_doctor_json.c: any bytes as another node's bundle; a document equals
# itself) with clang's libFuzzer + ASan/UBSan for GDRTRACE_DOCTOR_FUZZ_SECONDS
# (default 10), from the checked-in corpus tests/doctor/fuzz-corpus; new inputs
# go to $BUILD/fuzz-doctor, never into the repository.  Passes when libFuzzer
# reports no crash, leak, timeout or sanitizer finding; skips (77) without
# clang or its libFuzzer runtime.
. "$(dirname "$0")/../fuzz/lib.sh"
out=$BUILD/fuzz-doctor
fuzz_build "$out" fuzz_doctor_json -ldl tests/doctor/fuzz_doctor_json.c tools/cmd/doctor/doctor_json.c \
    tools/cmd/doctor/compare.c tools/cmd/doctor/inventory.c common/fingerprint.c
fuzz_run "$out" fuzz_doctor_json "${GDRTRACE_DOCTOR_FUZZ_SECONDS:-10}" "doctor's --compare reader" \
    tests/doctor/fuzz-corpus -rss_limit_mb=1024 -max_len=65536
