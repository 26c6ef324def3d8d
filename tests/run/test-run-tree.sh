#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-tree.sh — `gdrtrace run` waits for everything its command
# started, and never leaves empty evidence:
#  * `run -- sh -c '(rank &); exit 0'`: the shell exits at once, the rank
#    (which waits until the shell is gone, then writes its recorder) is
#    waited for: run returns only after the rank ended, its recorder
#    archived (not as `live`), the private folder removed; the same for a
#    rank started in a session of its own (setsid);
#  * a process of the command's tree that outlasts GDRTRACE_RUN_WAIT (and
#    writes no recorder) keeps the private folder, and this is said;
#  * run killed (SIGKILL) while it waits to archive: no archive under the
#    final name, the recorder stays in the private folder, and the shipped
#    Slurm epilog archives it; a SIGTERM then is noted and the archive
#    finished first;
#  * `dump` of an empty or missing folder writes no archive: exit 3, the
#    reason named; `run` of a command that never starts NCCL leaves no
#    archive in --dir, says why, verdict NO-DATA (exit 15).
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
FX=$PWD/$BUILD/tests/reader_fixture
EPILOG=$PWD/scripts/epilog/slurm-epilog.sh
for f in "$G" "$FX"; do [ -x "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }; done
T=$(mktemp -d)
trap 'exec 7>&- 8>&- 9>&-; rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK PMIX_NAMESPACE \
    OMPI_MCA_orte_ess_jobid TORCHELASTIC_RUN_ID RANK WORLD_SIZE GDRTRACE_RUN_WAIT
export GDRTRACE_DIR=$T/shm
mkdir -p "$GDRTRACE_DIR"
folders() { find "$GDRTRACE_DIR" -maxdepth 1 -name 'gdrtrace-run.*'; }

# The rank: waits until the shell that started it ($1) is gone, then does
# its work (a recorder in run's private folder), then marks itself done.
cat >"$T/rank.sh" <<EOF
#!/bin/sh
while kill -0 "\$1" 2>/dev/null; do sleep 0.05; done
sleep 2
"$FX" dmabuf "\$GDRTRACE_DIR/gdrtrace.T1.h.\$\$.rec" --pid \$\$ --job T1 || exit 99
: >"\$2"
EOF
chmod +x "$T/rank.sh"

tree() { # NAME HOW: run -- sh -c "(HOW rank &); exit 0"
    local name=$1 how=$2
    rm -f "$T/$name.done"
    "$G" run --dir "$T/$name" -- sh -c "($how \"\$0\" \$\$ \"\$1\" &); exit 0" "$T/rank.sh" "$T/$name.done" \
        >"$T/$name.out" 2>"$T/$name.err"
    local rc=$? done=no
    [ -e "$T/$name.done" ] && done=yes # checked at once: run has returned
    local arc n states
    arc=$(ls "$T/$name"/*.zst 2>/dev/null | head -n 1)
    n=$("$G" ls "$arc" 2>/dev/null | awk 'NR > 1' | wc -l)
    states=$("$G" ls "$arc" 2>/dev/null | awk 'NR > 1 {print $5}' | sort -u | tr '\n' ' ')
    [ $rc = 0 ] && [ $done = yes ] && [ "$n" = 1 ] && ! echo "$states" | grep -q live &&
        [ -z "$(folders)" ] && grep -q "^gdrtrace run: sh ended; .* still run: waiting for them" "$T/$name.err" &&
        pass "$name: run returned after the rank did its work; its recorder archived (${states% }), folder removed" ||
        fail "$name: exit $rc, rank done when run returned: $done, $n recorder(s) archived (${states}), left: $(folders) $(cat "$T/$name.err")"
    rm -rf "$(folders)" 2>/dev/null
}
tree bg ""
tree setsid setsid

# A process of the tree that outlasts the wait (no recorder): folder kept, said.
mkfifo "$T/hold"
GDRTRACE_RUN_WAIT=1 "$G" run --dir "$T/long" -- sh -c '(read -r _ <"$0" &); exit 0' "$T/hold" \
    >"$T/long.out" 2>"$T/long.err"
rc=$?
left=$(folders)
[ -n "$left" ] && grep -q "still run at the end of the wait: archived as they are now, the folder $left is kept" "$T/long.err" &&
    pass "a process that outlasts GDRTRACE_RUN_WAIT: said, the folder kept (exit $rc)" ||
    fail "outlasting process: left '$left': $(cat "$T/long.err")"
exec 9<>"$T/hold" # the held process opens it, then reads EOF and ends
exec 9>&-
rm -rf $left

# run SIGKILLed while it waits to archive: nothing under the final name, the
# recorder stays, and the epilog archives it.
mkfifo "$T/hold2"
SLURM_JOB_ID=777 SLURM_PROCID=0 "$G" run --dir "$T/killed" -- sh -c \
    '("$0" dmabuf "$GDRTRACE_DIR/gdrtrace.777.h.$$.rec" --pid $$ --job 777 && read -r _ <"$1" &); exit 0' \
    "$FX" "$T/hold2" >"$T/killed.out" 2>"$T/killed.err" &
runpid=$!
exec 8<>"$T/hold2" # the held process reads until this is closed
for _ in $(seq 1 600); do
    grep -q "waiting for them" "$T/killed.err" && ls "$GDRTRACE_DIR"/gdrtrace-run.*/gdrtrace.777.*.rec >/dev/null 2>&1 && break
    sleep 0.05
done
kill -KILL $runpid
wait $runpid 2>/dev/null
exec 8>&-
left=$(folders)
[ -z "$(ls "$T/killed" 2>/dev/null)" ] && [ -n "$left" ] && ls "$left"/gdrtrace.777.*.rec >/dev/null 2>&1 &&
    pass "run SIGKILLed before its archive: no archive under a final name, the recorder kept in $(basename "$left")" ||
    fail "SIGKILL: --dir holds '$(ls "$T/killed" 2>/dev/null)', left '$left'"
SLURM_JOB_ID=777 GDRTRACE_BIN=$G GDRTRACE_ARCHIVE_DIR=$T/arch GDRTRACE_EPILOG_SYSLOG=0 \
    bash "$EPILOG" >"$T/epi.out" 2>&1
n=$("$G" ls "$T"/arch/777/*.zst 2>/dev/null | awk 'NR > 1' | wc -l)
[ "$n" = 1 ] && [ -z "$(folders)" ] && pass "the epilog archived that recorder and pruned the folder" ||
    fail "epilog after a SIGKILL: $n recorder(s) archived, left '$(folders)': $(cat "$T/epi.out")"

# SIGTERM while run waits: noted, the archive finished first
mkfifo "$T/hold3"
SLURM_PROCID=0 GDRTRACE_JOB=778 "$G" run --dir "$T/term" -- sh -c \
    '("$0" dmabuf "$GDRTRACE_DIR/gdrtrace.778.h.$$.rec" --pid $$ --job 778 && read -r _ <"$1" &); exit 0' \
    "$FX" "$T/hold3" >"$T/term.out" 2>"$T/term.err" &
runpid=$!
exec 7<>"$T/hold3"
for _ in $(seq 1 600); do
    grep -q "waiting for them" "$T/term.err" && ls "$GDRTRACE_DIR"/gdrtrace-run.*/gdrtrace.778.*.rec >/dev/null 2>&1 && break
    sleep 0.05
done
kill -TERM $runpid
wait $runpid
rc=$?
exec 7>&-
n=$("$G" ls "$T"/term/*.zst 2>/dev/null | awk 'NR > 1' | wc -l)
[ $rc = 0 ] && [ "$n" = 1 ] && grep -q "when a signal came" "$T/term.err" &&
    grep -q "^gdrtrace run: signal 15 (Terminated) came after sh ended: the archive was finished first" "$T/term.err" &&
    pass "SIGTERM while waiting: the archive finished (1 recorder), the signal noted, exit 0" ||
    fail "SIGTERM: exit $rc, $n recorder(s): $(cat "$T/term.err")"
rm -rf $(folders)

# No empty evidence: dump of an empty or missing folder, run of a command without NCCL.
mkdir -p "$T/empty"
"$G" dump -o "$T/e.zst" "$T/empty" >"$T/e.out" 2>"$T/e.err"
rc=$?
[ $rc = 3 ] && [ ! -e "$T/e.zst" ] && [ -z "$(ls "$T" | grep 'e\.zst')" ] &&
    grep -q "^gdrtrace dump: no recorder to archive in $T/empty: $T/e.zst not written" "$T/e.err" &&
    pass "dump of an empty folder: exit 3, no file, the reason named" ||
    fail "dump of an empty folder: exit $rc, $(ls "$T" | grep 'e\.zst') $(cat "$T/e.err")"
"$G" dump -o "$T/m.zst" "$T/missing" >/dev/null 2>"$T/m.err"
rc=$?
[ $rc = 3 ] && [ ! -e "$T/m.zst" ] && grep -q "cannot stat" "$T/m.err" &&
    grep -q "no recorder to archive in $T/missing (what is said above was not archived)" "$T/m.err" &&
    pass "dump of a missing folder: exit 3, no file, both reasons named" ||
    fail "dump of a missing folder: exit $rc: $(cat "$T/m.err")"
"$G" run --dir "$T/nonccl" -- true >"$T/n.out" 2>"$T/n.err"
rc=$?
[ $rc = 15 ] && [ -z "$(ls "$T/nonccl")" ] && [ -z "$(folders)" ] &&
    grep -q "^gdrtrace run: no recorder was written: true never loaded the plugin" "$T/n.err" &&
    grep -q '^all .*NO-DATA' "$T/n.out" &&
    pass "run of a command without NCCL: no archive, the reason named, NO-DATA (exit 15)" ||
    fail "run without NCCL: exit $rc, --dir holds '$(ls "$T/nonccl")': $(cat "$T/n.err")"

[ $fails = 0 ] && echo "test-run-tree: ok" || { echo "$fails check(s) failed"; exit 1; }
