#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run-tests.sh — runs each test program or script in its own process with a
# timeout, keeps its output in $BUILD/test-logs/<name>.log, and ends with one
# summary line CI can read: "N passed, N failed, N skipped".
#   exit 0 = pass, 77 = skip (the log's last line says why), anything else = fail.
# An argument "@DIR" switches the build folder ($BUILD) for the arguments that
# follow, so one run (and one summary line) can cover several sanitizer
# builds; tests of a build other than build/default are named "<variant>:name".
# GDRTRACE_TEST_TIMEOUT (seconds, default 300) bounds each test;
# GDRTRACE_TEST_FILTER (a substring) runs only matching tests;
# GDRTRACE_TEST_EXCLUDE (comma-separated substrings) leaves matching tests out.
# A first argument --dev-shm (make check) also checks that the run leaves
# /dev/shm as it found it: anything a test left there is one more failure,
# named with the test after which it appeared (tests write only under their
# own scratch folders).
set -u
shm_check=0
if [ "${1:-}" = --dev-shm ]; then
    shm_check=1
    shift
fi
shm_list() { ls -A /dev/shm 2>/dev/null | LC_ALL=C sort; }
declare -A shm_by=()
if [ $shm_check -eq 1 ]; then
    shm_start=$(shm_list)
    shm_seen=$shm_start
fi
BUILD=${BUILD:-build/default}
timeout_s=${GDRTRACE_TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0 failed_logs=()
export BUILD
for t in "$@"; do
    if [[ "$t" == @* ]]; then
        BUILD=${t#@}
        continue
    fi
    logdir="$BUILD/test-logs"
    mkdir -p "$logdir"
    name=$(basename "$t")
    variant=$(basename "$BUILD")
    label=$name
    [ "$variant" = default ] || label="$variant:$name"
    if [ -n "${GDRTRACE_TEST_FILTER:-}" ] && [[ "$name" != *"$GDRTRACE_TEST_FILTER"* ]]; then
        continue
    fi
    excluded=0
    IFS=, read -r -a excl <<<"${GDRTRACE_TEST_EXCLUDE:-}"
    for x in "${excl[@]+"${excl[@]}"}"; do
        [ -n "$x" ] && [[ "$name" == *"$x"* ]] && excluded=1
    done
    [ "$excluded" -eq 1 ] && continue
    log="$logdir/$name.log"
    start=$(date +%s%N)
    timeout --kill-after=10 "$timeout_s" "$t" >"$log" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 )); secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
    case $rc in
    0) pass=$((pass + 1)); printf 'PASS  %-40s %6ss\n' "$label" "$secs" ;;
    77) skip=$((skip + 1)); printf 'SKIP  %-40s %6ss  (%s)\n' "$label" "$secs" "$(tail -n 1 "$log")" ;;
    124|137) fail=$((fail + 1)); failed_logs+=("$log"); printf 'FAIL  %-40s %6ss  (timed out after %ss)\n' "$label" "$secs" "$timeout_s" ;;
    *) fail=$((fail + 1)); failed_logs+=("$log"); printf 'FAIL  %-40s %6ss  (exit %d)\n' "$label" "$secs" "$rc" ;;
    esac
    if [ $shm_check -eq 1 ]; then
        shm_now=$(shm_list)
        while IFS= read -r f; do
            [ -n "$f" ] && [ -z "${shm_by[$f]:-}" ] && shm_by[$f]=$label
        done < <(comm -13 <(printf '%s\n' "$shm_seen") <(printf '%s\n' "$shm_now"))
        shm_seen=$shm_now
    fi
done
if [ $shm_check -eq 1 ]; then
    left=()
    while IFS= read -r f; do
        [ -n "$f" ] && left+=("/dev/shm/$f (after ${shm_by[$f]:-an unknown test})")
    done < <(comm -13 <(printf '%s\n' "$shm_start") <(shm_list))
    if [ ${#left[@]} -eq 0 ]; then
        pass=$((pass + 1))
        printf 'PASS  %-40s\n' "/dev/shm left as found"
    else
        fail=$((fail + 1))
        printf 'FAIL  %-40s (%d left: %s)\n' "/dev/shm left as found" ${#left[@]} "${left[*]:0:5}"
    fi
fi
for l in "${failed_logs[@]+"${failed_logs[@]}"}"; do
    echo "---- last lines of $l"
    tail -n 30 "$l"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
