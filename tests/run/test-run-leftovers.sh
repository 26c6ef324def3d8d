#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-leftovers.sh — what `gdrtrace run` leaves in GDRTRACE_DIR is
# found and cleaned like any recorder:
#  * a --keep folder (gdrtrace-run.*): ls names it (as a folder, not a
#    file), prune --dry-run says it would go, prune removes its exited
#    recorder, NCCL's log and the folder;
#  * a folder whose run is still going (its flock held) is left alone, even
#    with an exited recorder in it; once that run was killed with SIGKILL
#    (nothing of it cleaned up) prune removes it;
#  * prune --job - removes the recorders without a job id (as ls writes
#    them), and --job J keeps them.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
FX=$PWD/$BUILD/tests/reader_fixture
for f in "$G" "$FX"; do [ -x "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }; done
T=$(mktemp -d)
HOLDER=
trap '[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK
export GDRTRACE_DIR=$T/shm
mkdir -p "$GDRTRACE_DIR"
host=$(hostname)
# The job: a closed recorder and an NCCL log in run's private folder, then,
# given a FIFO, a wait until a line can be read from it.
{
    echo '#!/bin/sh'
    echo "\"$FX\" dmabuf \"\$GDRTRACE_DIR/gdrtrace.j.h.\$\$.rec\" --pid \$\$ --job j1 || exit 99"
    echo ": >\"\$GDRTRACE_DIR/nccl.$host.\$\$.log\""
    echo '[ -n "${1:-}" ] && read -r _ <"$1"'
    echo 'exit 0'
} >"$T/job.sh"
chmod +x "$T/job.sh"
folders() { find "$GDRTRACE_DIR" -maxdepth 1 -name 'gdrtrace-run.*' | wc -l; }

# 1. --keep
"$G" run --keep --dir "$T/a" -- "$T/job.sh" >/dev/null 2>&1
[ "$(folders)" = 1 ] || fail "--keep left $(folders) folder(s)"
"$G" ls "$GDRTRACE_DIR" >"$T/ls.out" 2>"$T/ls.err"
grep -q "1 folder(s) left by gdrtrace run (e.g. gdrtrace-run\." "$T/ls.err" &&
    ! grep -q "file(s) not named" "$T/ls.err" &&
    pass "ls: the --keep folder named as left by gdrtrace run (not a file)" ||
    fail "ls: $(cat "$T/ls.out" "$T/ls.err")"
"$G" prune --dry-run "$GDRTRACE_DIR" >"$T/dry.out" 2>&1
grep -q "^would-remove exited .*gdrtrace-run\..*/gdrtrace.j.h" "$T/dry.out" &&
    grep -q "^would-remove run-folder .*gdrtrace-run\." "$T/dry.out" && [ "$(folders)" = 1 ] &&
    pass "prune --dry-run: the folder's recorder and the folder would go" || fail "dry run: $(cat "$T/dry.out")"
"$G" prune "$GDRTRACE_DIR" >"$T/p.out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(folders)" = 0 ] && grep -q "^removed .*run-folder" "$T/p.out" &&
    pass "prune: the --keep folder, its recorder and NCCL's log removed" ||
    fail "prune: exit $rc, $(folders) folder(s): $(cat "$T/p.out")"

# 2. a run in progress, then killed with SIGKILL
mkfifo "$T/go"
"$G" run --dir "$T/b" -- "$T/job.sh" "$T/go" >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 100); do
    ls "$GDRTRACE_DIR"/gdrtrace-run.*/gdrtrace.j.h.*.rec >/dev/null 2>&1 && break
    sleep 0.05
done
"$G" prune "$GDRTRACE_DIR" >"$T/p2.out" 2>&1
[ "$(folders)" = 1 ] && grep -q "^kept .*run-folder .*a gdrtrace run still uses it" "$T/p2.out" &&
    ls "$GDRTRACE_DIR"/gdrtrace-run.*/gdrtrace.j.h.*.rec >/dev/null 2>&1 &&
    pass "a running gdrtrace run's folder is left alone (its exited recorder too)" ||
    fail "running: $(cat "$T/p2.out")"
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=
# the job (its own process group: not killed) reads its line and ends
timeout 10 sh -c 'echo >"$1"' _ "$T/go"
"$G" prune "$GDRTRACE_DIR" >"$T/p3.out" 2>&1
[ "$(folders)" = 0 ] && pass "after SIGKILL of gdrtrace run: prune removes its folder" ||
    fail "after SIGKILL: $(cat "$T/p3.out")"

# 3. --job -
mkdir -p "$T/nj"
"$FX" dmabuf "$T/nj/gdrtrace.h.7.rec" --pid 7 --job ""
"$G" ls "$T/nj" | grep -q ' 7 - ' || fail "fixture: no job-less recorder: $("$G" ls "$T/nj")"
"$G" prune --job j1 "$T/nj" >/dev/null 2>&1
[ -e "$T/nj/gdrtrace.h.7.rec" ] || fail "--job j1 removed a job-less recorder"
"$G" prune --job - "$T/nj" >"$T/p4.out" 2>&1
[ ! -e "$T/nj/gdrtrace.h.7.rec" ] && pass "prune --job -: the recorder without a job id removed (--job j1 kept it)" ||
    fail "prune --job -: $(cat "$T/p4.out")"
[ $fails = 0 ] && echo "test-run-leftovers: ok" || { echo "$fails check(s) failed"; exit 1; }
