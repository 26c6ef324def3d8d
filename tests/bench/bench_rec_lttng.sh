#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_rec_lttng.sh — `make bench`: runs bench_rec with a live LTTng-UST
# session, so the recorder's control event and an *enabled* LTTng tracepoint
# of the same payload are measured in the same process.  The session is a
# snapshot session (in-memory, overwrite: LTTng's own flight-recorder mode,
# the closest match to the recorder).  Starts its own lttng-sessiond and
# kills it on exit.  Without lttng-tools it says so and exits 0.
set -u
BUILD=${BUILD:-build/default}
bin="$BUILD/bench/bench_rec"
if ! command -v lttng-sessiond >/dev/null 2>&1 || ! command -v lttng >/dev/null 2>&1; then
    echo "bench_rec_lttng: lttng-tools not installed; the enabled-tracepoint figure is skipped"
    exit 0
fi
home=$(mktemp -d "${TMPDIR:-/tmp}/gt-lttng-XXXXXX")
export LTTNG_HOME="$home"
sess="gdrtrace-bench-$$"
sd=
cleanup() {
    lttng destroy "$sess" >/dev/null 2>&1
    if [ -n "$sd" ] && kill -0 "$sd" 2>/dev/null; then
        kill "$sd"
        wait "$sd" 2>/dev/null
    fi
    rm -rf "$home"
}
trap cleanup EXIT
lttng-sessiond --no-kernel --quiet &
sd=$!
for _ in $(seq 50); do
    lttng list >/dev/null 2>&1 && break
    sleep 0.1
done
if ! lttng create "$sess" --snapshot >/dev/null ||
    ! lttng enable-event -u -s "$sess" 'gdrtrace_bench:control' >/dev/null; then
    echo "bench_rec_lttng: could not set up an LTTng session; the enabled-tracepoint figure is skipped"
    exit 0
fi
GT_BENCH_LTTNG_SESSION="$sess" "$bin"
