#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-epilog.sh — scripts/epilog/slurm-epilog.sh with fake SLURM_* variables
# against a temporary folder (no Slurm needed):
#  * the finished job's recorders are archived to
#    $GDRTRACE_ARCHIVE_DIR/<job>/<node>.zst (mode 0600, every recorder of the
#    job in it, readable by gdrtrace), then its exited and crashed recorders
#    are removed; its live one, other jobs' (job 12 vs 12_3 included) and a
#    file that is not a recorder stay;
#  * a requeued job's second run gets a second archive, the first untouched;
#  * when the archive cannot be written nothing is pruned; without
#    GDRTRACE_ARCHIVE_DIR it prunes only;
#  * it exits 0 in every case (a failing Epilog drains the node), also with
#    no SLURM_JOB_ID or no gdrtrace command;
#  * the sidecar script of docs/examples/k8s-prune.yaml archives and prunes
#    the job when sent SIGTERM (skipped without python3's yaml).
set -u
BUILD=${BUILD:-build/default}
G=$(cd "$(dirname "$BUILD/gdrtrace")" && pwd)/gdrtrace
FX=$BUILD/tests/reader_fixture
EP=scripts/epilog/slurm-epilog.sh
T=$(mktemp -d)
HOLD_FD=
trap '[ -n "$HOLD_FD" ] && exec {HOLD_FD}>&-; rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# a straggler of job 12 still running: the fixture as a writer holding its
# LIVE recorder (in $T/live, linked into each fresh folder) until we exit
mkdir -p "$T/live"; mkfifo "$T/hold"
$FX dmabuf "$T/live/gdrtrace.12.nodeX.live.rec" --job 12 --hold <"$T/hold" >"$T/hold.out" &
LIVEPID=$!
exec {HOLD_FD}>"$T/hold"
for _ in $(seq 200); do grep -q ready "$T/hold.out" 2>/dev/null && break; sleep 0.05; done
P=$((4000000 + RANDOM))
while kill -0 "$P" 2>/dev/null || kill -0 $((P + 9)) 2>/dev/null; do P=$((P + 10)); done

D=$T/shm
fill() {
    rm -rf "$D"; mkdir -p "$D"
    $FX dmabuf "$D/gdrtrace.12.nodeX.$P.rec" --job 12 --pid "$P"                    # exited
    $FX host "$D/gdrtrace.12.nodeX.$((P + 1)).rec" --job 12 --pid $((P + 1)) --state live  # crashed
    ln "$T/live/gdrtrace.12.nodeX.live.rec" "$D/"                                  # live straggler
    $FX dmabuf "$D/gdrtrace.12_3.nodeX.$((P + 2)).rec" --job 12_3 --pid $((P + 2))  # another job
    $FX dmabuf "$D/gdrtrace.99.nodeX.$((P + 3)).rec" --job 99 --pid $((P + 3))      # another job
    printf 'junk' >"$D/gdrtrace.12.junk.rec"
}
epilog() { # variables, then run; prints the log, returns the exit code
    env -u SLURM_JOB_ID GDRTRACE_DIR="$D" GDRTRACE_BIN="$G" GDRTRACE_EPILOG_SYSLOG=0 \
        SLURMD_NODENAME=nodeX "$@" bash "$EP" 2>&1
}
left() { ls -A "$D" | sort | tr '\n' ' '; }

fill
out=$(epilog SLURM_JOB_ID=12 GDRTRACE_ARCHIVE_DIR="$T/arch"); rc=$?
A=$T/arch/12/nodeX.zst
want="gdrtrace.12.junk.rec gdrtrace.12.nodeX.live.rec gdrtrace.12_3.nodeX.$((P + 2)).rec gdrtrace.99.nodeX.$((P + 3)).rec "
if [ $rc = 0 ] && [ "$(left)" = "$want" ]; then
    pass "job 12: exited and crashed recorders pruned; live one, other jobs (12_3, 99) and junk kept"
else fail "job 12: exit $rc, left $(left), want $want; log: $out"; fi
if [ -f "$A" ] && [ "$(stat -c %a "$A")" = 600 ]; then pass "archive $A written, mode 0600"
else fail "archive: $(ls -l "$T/arch/12" 2>&1)"; fi
ls_out=$("$G" ls "$A" 2>&1)
if [ "$(grep -c ' 12 ' <<<"$ls_out")" = 3 ] && ! grep -Eq ' (12_3|99) ' <<<"$ls_out" &&
   grep -q ' live ' <<<"$ls_out" && grep -q ' crashed ' <<<"$ls_out" && grep -q ' exited ' <<<"$ls_out"; then
    pass "the archive holds job 12's three recorders (live, crashed, exited) and no other job's"
else fail "archive content: $ls_out"; fi
grep -q "removed .*gdrtrace.12.nodeX.$P.rec" <<<"$out" && grep -q "kept .*live.rec .*pid $LIVEPID runs" <<<"$out" &&
    ! grep -q "not '12'" <<<"$out" && pass "log: removals and the live straggler, not other jobs' recorders" ||
    fail "log: $out"

# The archive belongs to the job's owner (SLURM_JOB_UID/GID; root only), and
# job 12's recorders in a folder a killed `gdrtrace run` left are archived
# and pruned with the folder.
if [ "$(id -u)" = 0 ]; then
    fill
    mkdir -p "$D/gdrtrace-run.k1ll3d"
    $FX dmabuf "$D/gdrtrace-run.k1ll3d/gdrtrace.12.nodeX.$((P + 5)).rec" --job 12 --pid $((P + 5))
    out=$(epilog SLURM_JOB_ID=12 SLURM_JOB_UID=65534 SLURM_JOB_GID=65534 GDRTRACE_ARCHIVE_DIR="$T/own"); rc=$?
    A2=$T/own/12/nodeX.zst
    [ $rc = 0 ] && [ "$(stat -c %u:%g:%a "$T/own/12")" = 65534:65534:700 ] &&
        [ "$(stat -c %u:%a "$A2")" = 65534:600 ] &&
        pass "archive folder and file owned by the job's uid/gid (0700, 0600)" ||
        fail "owner: exit $rc, $(stat -c '%n %u:%g %a' "$T/own/12" "$A2" 2>&1); $out"
    [ "$("$G" ls "$A2" 2>/dev/null | grep -c ' 12 ')" = 4 ] && [ ! -e "$D/gdrtrace-run.k1ll3d" ] &&
        pass "a killed run's folder: job 12's recorder archived, the folder pruned" ||
        fail "run folder: $("$G" ls "$A2" 2>&1); left $(left)"
else
    echo "note: not root: the archive owner is not checked"
fi

# requeue: a second run of job 12 gets its own archive
sum1=$(md5sum <"$A")
$FX dmabuf "$D/gdrtrace.12.nodeX.$((P + 4)).rec" --job 12 --pid $((P + 4))
out=$(epilog SLURM_JOB_ID=12 GDRTRACE_ARCHIVE_DIR="$T/arch"); rc=$?
n=$(ls "$T/arch/12" | grep -c '\.zst$')
if [ $rc = 0 ] && [ "$n" = 2 ] && [ "$(md5sum <"$A")" = "$sum1" ] && [ ! -e "$D/gdrtrace.12.nodeX.$((P + 4)).rec" ]; then
    pass "requeued job: second archive beside the first, first unchanged"
else fail "requeue: exit $rc, $n archives: $out"; fi

# archive cannot be written: nothing pruned
fill
printf 'a file' >"$T/notadir"
out=$(epilog SLURM_JOB_ID=12 GDRTRACE_ARCHIVE_DIR="$T/notadir"); rc=$?
if [ $rc = 0 ] && [ -e "$D/gdrtrace.12.nodeX.$P.rec" ] && grep -q "recorders kept in $D" <<<"$out"; then
    pass "archive folder unusable: exit 0, nothing pruned, logged"
else fail "unusable archive: exit $rc, left $(left): $out"; fi

# no archive folder: prune only
out=$(epilog SLURM_JOB_ID=12); rc=$?
[ $rc = 0 ] && [ ! -e "$D/gdrtrace.12.nodeX.$P.rec" ] && [ -e "$D/gdrtrace.12_3.nodeX.$((P + 2)).rec" ] &&
    pass "no GDRTRACE_ARCHIVE_DIR: prunes without archiving" || fail "prune only: exit $rc: $out"

# exit 0 whatever happens
fill
out=$(epilog); rc=$?
[ $rc = 0 ] && [ -e "$D/gdrtrace.12.nodeX.$P.rec" ] && grep -q "SLURM_JOB_ID is not set" <<<"$out" &&
    pass "no SLURM_JOB_ID: exit 0, nothing touched" || fail "no job id: exit $rc: $out"
out=$(epilog SLURM_JOB_ID=12 GDRTRACE_BIN=/nonexistent/gdrtrace); rc=$?
[ $rc = 0 ] && [ -e "$D/gdrtrace.12.nodeX.$P.rec" ] && grep -q "not found" <<<"$out" &&
    pass "no gdrtrace command: exit 0, logged" || fail "no command: exit $rc: $out"
out=$(epilog SLURM_JOB_ID=77 GDRTRACE_ARCHIVE_DIR="$T/arch"); rc=$?
[ $rc = 0 ] && [ -z "$out" ] && [ ! -e "$T/arch/77" ] && pass "a job without recorders: silent, no archive" ||
    fail "job without recorders: exit $rc: $out"

# the Kubernetes example's sidecar script (docs/examples/k8s-prune.yaml), run
# as the sidecar runs it, with /archive pointed at a temporary folder
K8S=docs/examples/k8s-prune.yaml
if script=$(python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(d["spec"]["template"]["spec"]["initContainers"][0]["args"][0])' "$K8S" 2>/dev/null); then
    fill
    mkdir -p "$T/bin"; ln -sf "$G" "$T/bin/gdrtrace"
    PATH=$T/bin:$PATH GDRTRACE_DIR=$D JOB=12 POD=pod-a sh -c "${script//\/archive/$T/k8s}" >"$T/k8s.log" 2>&1 &
    sc=$!
    # the trap is set once the script waits on its sleep
    for _ in $(seq 100); do [ -n "$(pgrep -P $sc)" ] && break; sleep 0.05; done
    kill -TERM $sc; wait $sc; rc=$?
    if [ $rc = 0 ] && [ -f "$T/k8s/12/pod-a.zst" ] && [ "$(stat -c %a "$T/k8s/12/pod-a.zst")" = 600 ] &&
       [ ! -e "$D/gdrtrace.12.nodeX.$P.rec" ] && [ -e "$D/gdrtrace.12.nodeX.live.rec" ] &&
       [ -e "$D/gdrtrace.99.nodeX.$((P + 3)).rec" ]; then
        pass "k8s sidecar script: on SIGTERM archives to /archive/<job>/<pod>.zst and prunes the job"
    else fail "k8s sidecar: exit $rc, left $(left), archive: $(ls -l "$T/k8s/12" 2>&1), log: $(cat "$T/k8s.log")"; fi
else
    echo "note: python3 with yaml absent: $K8S not exercised"
fi

[ $fails = 0 ] && echo "all epilog checks passed" || echo "$fails check(s) failed"
[ $fails = 0 ]
