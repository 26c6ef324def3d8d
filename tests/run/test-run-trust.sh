#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-trust.sh — `gdrtrace run` and what the job's environment or
# another local user hands it (docs/security.md):
#  * NCCL_NET_PLUGIN=none: refused with what none means (not "another
#    plugin … NCCL loads one");
#  * NCCL_NET_PLUGIN=<a path>/libnccl-net-gdrtrace.so that is another file
#    than the installed plugin: said to be another file (and whose), not
#    "names gdrtrace already";
#  * --dir that is a symbolic link another user owns: refused (root only:
#    the link is made as nobody);
#  * the recorders of a command that leaves a writer running are not
#    archived half-written and deleted: run waits for the writers, bounded
#    by GDRTRACE_RUN_WAIT, then says so and keeps the folder.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
H=$PWD/$BUILD/harness/harness
for f in "$G" "$H"; do
    [ -x "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    GDRTRACE_TRANSPORT GDRTRACE_INNER SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK \
    PMIX_RANK PMIX_NAMESPACE OMPI_MCA_orte_ess_jobid TORCHELASTIC_RUN_ID
export GDRTRACE_DIR=$T/shm GDRTRACE_SOCKET_IFNAME=lo
mkdir -p "$GDRTRACE_DIR"

NCCL_NET_PLUGIN=none "$G" run --dir "$T/d1" -- touch "$T/1.ran" >"$T/1.out" 2>"$T/1.err"
rc=$?
[ $rc = 125 ] && [ ! -e "$T/1.ran" ] && grep -q "NCCL_NET_PLUGIN=none: NCCL loads no external net plugin" "$T/1.err" &&
    ! grep -q "loads one" "$T/1.err" && pass "NCCL_NET_PLUGIN=none: refused, what none means said" ||
    fail "NCCL_NET_PLUGIN=none: exit $rc, $(cat "$T/1.err")"

mkdir -p "$T/other"
cp "$BUILD/libnccl-net-gdrtrace.so" "$T/other/"
NCCL_NET_PLUGIN=$T/other/libnccl-net-gdrtrace.so "$G" run --dir "$T/d2" -- true >"$T/2.out" 2>"$T/2.err"
grep -q "NCCL_NET_PLUGIN=$T/other/libnccl-net-gdrtrace.so (the job's) is another file than the plugin installed" "$T/2.err" &&
    ! grep -q "names gdrtrace already" "$T/2.err" && pass "NCCL_NET_PLUGIN naming another copy: said to be another file" ||
    fail "NCCL_NET_PLUGIN=another copy: $(cat "$T/2.err")"

if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    mkdir -p "$T/nob" "$T/target"
    chown nobody "$T/nob"
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- ln -s "$T/target" "$T/nob/out"
    chown nobody "$T/other/libnccl-net-gdrtrace.so"
    NCCL_NET_PLUGIN=$T/other/libnccl-net-gdrtrace.so "$G" run --dir "$T/nob/out" -- touch "$T/3.ran" >"$T/3.out" 2>"$T/3.err"
    rc=$?
    [ $rc = 125 ] && [ ! -e "$T/3.ran" ] && [ -z "$(ls -A "$T/target")" ] &&
        grep -q "dir $T/nob/out: a symbolic link owned by another user" "$T/3.err" &&
        pass "--dir a link another user owns: refused (125), nothing run" ||
        fail "--dir another user's link: exit $rc, $(cat "$T/3.err")"
    NCCL_NET_PLUGIN=$T/other/libnccl-net-gdrtrace.so "$G" run --dir "$T/d3" -- true >"$T/3b.out" 2>"$T/3b.err"
    grep -q "is another file than the plugin installed.*owned by another user (uid $(id -u nobody))" "$T/3b.err" &&
        pass "NCCL_NET_PLUGIN naming another user's copy: its owner said" ||
        fail "NCCL_NET_PLUGIN=another user's copy: $(cat "$T/3b.err")"
    # the job's NCCL_DEBUG_FILE in a shared folder: a log another user plants
    # there during the run is not this run's
    S=$T/sharedlog
    mkdir -p "$S" && chmod 1777 "$S"
    host=$(hostname)
    NCCL_DEBUG_FILE="$S/nccl.%h.%p.log" "$G" run --dir "$T/d4" -- sh -c \
        'setpriv --reuid=nobody --regid=nogroup --clear-groups -- sh -c "echo \"$1 INFO planted\" >$2"; shift 2; exec "$@"' \
        sh "$host:99999:99999 [0] NCCL" "$S/nccl.$host.99999.log" "$H" --abi 12 --data-only --iters 2 --max-size 64K \
        >"$T/4.out" 2>"$T/4.err"
    rc=$?
    [ -f "$S/nccl.$host.99999.log" ] && grep -q "NCCL log $S/nccl.$host.99999.log is owned by nobody (uid [0-9]*), not by this job's user: not this run's, not copied" "$T/4.err" &&
        ! ls "$T/d4" | grep -q '\.99999\.log$' && ls "$T/d4" | grep -q '\.log$' &&
        pass "NCCL_DEBUG_FILE in a shared folder: a log nobody planted is named, not copied; the job's are" ||
        fail "planted NCCL log (exit $rc): $(ls "$T/d4" "$S" | tr '\n' ' ') $(cat "$T/4.err" | tail -n 6)"
else
    echo "note: not root (or no nobody/setpriv): another user's --dir link and NCCL log not tried"
fi

# A command that leaves a writer behind: `sh -c "writer & sleep 0.5; exit 0"`.
FX=$PWD/$BUILD/tests/reader_fixture
if [ -x "$FX" ]; then
    # (a) the writer ends within the wait: waited for, archived closed, folder gone
    start=$(date +%s.%N)
    GDRTRACE_RUN_WAIT=30 "$G" run --dir "$T/w1" -- sh -c \
        'sleep 2 | "$0" host "$GDRTRACE_DIR/gdrtrace.W.h.$$.rec" --job W --hold >/dev/null & sleep 0.5; exit 0' \
        "$FX" >"$T/w1.out" 2>"$T/w1.err"
    rc=$?
    took=$(echo "$(date +%s.%N) - $start" | bc)
    states=$("$G" ls "$T"/w1/*.zst 2>/dev/null | awk 'NR > 1 {print $5}' | sort -u | tr '\n' ' ')
    left=$(find "$GDRTRACE_DIR" -maxdepth 1 -name 'gdrtrace-run.*')
    grep -q "^gdrtrace run: sh ended; .*1 recorder(s) still being written.* still run: waiting for them, at most 30 s" "$T/w1.err" &&
        [ "$(echo "$took >= 1.4" | bc)" = 1 ] && [ -n "$states" ] && ! echo "$states" | grep -q live &&
        [ -z "$left" ] &&
        pass "a writer the command left running: waited for (${took%%.??????*} s), archived ${states}, folder removed" ||
        fail "writer left running (exit $rc, ${took} s, archived states '$states', left '$left'): $(cat "$T/w1.err")"
    # (b) the writer outlasts the wait: said, archived as it is, folder kept
    GDRTRACE_RUN_WAIT=1 "$G" run --dir "$T/w2" -- sh -c \
        'sleep 6 | "$0" host "$GDRTRACE_DIR/gdrtrace.W.h.$$.rec" --job W --hold >/dev/null & sleep 0.5; exit 0' \
        "$FX" >"$T/w2.out" 2>"$T/w2.err"
    left=$(find "$GDRTRACE_DIR" -maxdepth 1 -name 'gdrtrace-run.*' | head -n 1)
    grep -q "still being written.* still run at the end of the wait: archived as they are now, the folder $left is kept" "$T/w2.err" &&
        [ -n "$left" ] && ls "$left"/gdrtrace.*.rec >/dev/null 2>&1 &&
        pass "a writer that outlasts GDRTRACE_RUN_WAIT: said, the folder kept" ||
        fail "writer outlasting the wait (left '$left'): $(cat "$T/w2.err")"
    sleep 6 # the held writer ends
else
    fail "$FX not built (make tests)"
fi

[ $fails = 0 ] && echo "gdrtrace run: the job's and other users' inputs judged" && exit 0
echo "$fails check(s) failed"
exit 1
