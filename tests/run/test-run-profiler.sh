#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-profiler.sh — `gdrtrace run` and NCCL_PROFILER_PLUGIN (invariant 7
# of tools/cmd/cmd_run.c), with a stand-in libnccl.so.2 on the job's library
# path (tests/run/fake_nccl.c answers FAKE_NCCL_VERSION):
#  * NCCL 2.27.3, nothing set: NCCL_PROFILER_PLUGIN=<the plugin> reaches the
#    job, and one "gdrtrace run:" line says why;
#  * NCCL 2.28.3: left unset (NCCL takes the profiler from the net plugin,
#    and a site's default libnccl-profiler.so keeps its slot);
#  * the job's own value (another profiler, none): kept, and said;
#  * no libnccl.so.2 to be found: left unset, and said.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
FN=$PWD/$BUILD/tests/fakenccl
for f in "$G" "$FN/libnccl.so.2"; do
    [ -f "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_PROFILER_PLUGIN NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE \
    SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK
export GDRTRACE_DIR=$T/shm
mkdir -p "$GDRTRACE_DIR"
job='echo "PP=${NCCL_PROFILER_PLUGIN:-unset}"'
# runit NAME VARS...: gdrtrace run with VARS, the job printing what it got
runit() {
    local n=$1
    shift
    env "$@" "$G" run --dir "$T/$n" -- sh -c "$job" > "$T/$n.out" 2> "$T/$n.err"
}
runit old LD_LIBRARY_PATH="$FN" FAKE_NCCL_VERSION=22703
so=$(cd "$(dirname "$G")/nccl-net-gdrtrace" && pwd -P)/libnccl-net-gdrtrace.so
grep -qx "PP=$so" "$T/old.out" && pass "2.27.3: NCCL_PROFILER_PLUGIN=<the plugin> reached the job" ||
    fail "2.27.3: the job got $(cat "$T/old.out") (want PP=$so)"
grep -q '^gdrtrace run: NCCL 2.27.3 (.*libnccl.so.2) loads a profiler only when NCCL_PROFILER_PLUGIN names one: NCCL_PROFILER_PLUGIN=.* set' "$T/old.err" &&
    pass "2.27.3: one line says it was set and why" || fail "2.27.3: $(grep PROFILER "$T/old.err")"
runit new LD_LIBRARY_PATH="$FN" FAKE_NCCL_VERSION=22803 GDRTRACE_RUN_FULL=1
grep -qx 'PP=unset' "$T/new.out" && pass "2.28.3: left unset (a site's default profiler keeps its slot)" ||
    fail "2.28.3: the job got $(cat "$T/new.out")"
runit other LD_LIBRARY_PATH="$FN" FAKE_NCCL_VERSION=22703 NCCL_PROFILER_PLUGIN=/opt/x/libother.so
grep -qx 'PP=/opt/x/libother.so' "$T/other.out" &&
    grep -q 'NCCL_PROFILER_PLUGIN=/opt/x/libother.so (the job.s) kept: NCCL loads that profiler, so gdrtrace records no collective metrics' "$T/other.err" &&
    pass "the job's other profiler: kept, and said" || fail "other: $(cat "$T/other.out") $(grep PROFILER "$T/other.err")"
runit none LD_LIBRARY_PATH="$FN" FAKE_NCCL_VERSION=22703 NCCL_PROFILER_PLUGIN=none
grep -qx 'PP=none' "$T/none.out" && grep -q 'NCCL_PROFILER_PLUGIN=none (the job.s) kept' "$T/none.err" &&
    pass "the job's none: kept, and said" || fail "none: $(cat "$T/none.out")"
if ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
    echo "skip one check: this machine's ld.so.cache has a libnccl.so.2 (no way to hide it)"
else
runit nolib LD_LIBRARY_PATH="$T/empty"
grep -qx 'PP=unset' "$T/nolib.out" && grep -q 'NCCL_PROFILER_PLUGIN left unset: the job.s NCCL is not on its library path' "$T/nolib.err" &&
    pass "no libnccl.so.2 found: left unset, and said" || fail "nolib: $(cat "$T/nolib.out") $(grep -i profiler "$T/nolib.err")"
fi
[ $fails = 0 ] && echo "test-run-profiler: all checks passed" && exit 0
echo "$fails check(s) failed"
exit 1
