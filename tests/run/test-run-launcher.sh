#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-launcher.sh — `gdrtrace run` as mpirun and srun start it: 64 ranks
# at once, each with the launcher's variables (OMPI_COMM_WORLD_RANK and
# OMPI_MCA_orte_ess_jobid; SLURM_PROCID and SLURM_JOB_ID), into one --dir,
# their stdout and stderr merged as a launcher merges them.  Each rank's job
# is a stand-in that writes a fixture recorder (DIRECT-DMABUF; rank 17's
# fell back) and an NCCL log into the private folder; rank 33's fails (3).
# Checks:
#  * one line per rank (rank, host, verdict, exit, archive), the full
#    verdict only for the ranks whose exit is not 0, no per-rank notes:
#    the log grows by one line per rank, not by a block;
#  * the exit codes a launcher collects: 0, 20 (rank 17, --expect dmabuf),
#    3 (rank 33's own failure); with --command-status 0 for rank 17 too
#    (its verdict still printed in full);
#  * rank 0 names the command that judges the job, and that command
#    (verdict --expect dmabuf --nccl-log DIR DIR) exits 20 over 64 archives.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
FX=$PWD/$BUILD/tests/reader_fixture
for f in "$G" "$FX"; do [ -x "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }; done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK PMIX_NAMESPACE \
    OMPI_MCA_orte_ess_jobid TORCHELASTIC_RUN_ID
export GDRTRACE_DIR=$T/shm
mkdir -p "$GDRTRACE_DIR"
host=$(hostname)
N=64
# The rank's job: its recorder in the private folder run made (GDRTRACE_DIR),
# and the NCCL log where run's NCCL_DEBUG_FILE (nccl.%h.%p.log) points.
cat >"$T/job.sh" <<EOF
#!/bin/sh
r=\${OMPI_COMM_WORLD_RANK:-\$SLURM_PROCID}
kind=dmabuf; [ "\$r" = 17 ] && kind=fallback
"$FX" \$kind "\$GDRTRACE_DIR/gdrtrace.\$GDRTRACE_JOB.node-\$r.\$\$.rec" --host node-\$r --pid \$\$ \\
    --rank \$r --world $N --job "\$GDRTRACE_JOB" || exit 99
: >"\$GDRTRACE_DIR/nccl.$host.\$\$.log"
[ "\$r" = 33 ] && exit 3
exit 0
EOF
chmod +x "$T/job.sh"

launch() { # launch NAME RANKVAR JOBVAR JOBID [RUN OPTIONS]: N ranks at once, exit codes in NAME.rc
    local name=$1 rv=$2 jv=$3 id=$4 r
    shift 4
    mkdir -p "$T/$name.rc"
    for r in $(seq 0 $((N - 1))); do
        (env "$rv=$r" "$jv=$id" "$G" run --expect dmabuf --dir "$T/$name" "$@" -- "$T/job.sh"
         echo $? >"$T/$name.rc/$r") &
    done >"$T/$name.out" 2>"$T/$name.err"
    wait
}
check_lines() { # NAME JOBID EXIT17: one line per rank, full blocks only where exit != 0
    local name=$1 id=$2 e17=$3 bad=0 r want
    for r in $(seq 0 $((N - 1))); do
        want=0
        [ "$r" = 17 ] && want=$e17
        [ "$r" = 33 ] && want=3
        v=DIRECT-DMABUF
        [ "$r" = 17 ] && v=FALLBACK
        n=$(grep -c "^gdrtrace run: rank $r host $host verdict $v exit $want archive $T/$name/$id.$host.r$r.zst$" "$T/$name.out")
        got=$(cat "$T/$name.rc/$r" 2>/dev/null)
        if [ "$n" != 1 ] || [ "$got" != "$want" ]; then
            bad=$((bad + 1))
            [ $bad -le 3 ] && echo "     rank $r: $n line(s), exit $got (want $want)"
        fi
    done
    [ $bad = 0 ] && pass "$name: $N ranks, one line each (rank, host, verdict, exit, archive); exits as collected" ||
        fail "$name: $bad rank(s) without their line or exit: $(head -5 "$T/$name.out")"
    local lines blocks other
    lines=$(wc -l <"$T/$name.out")
    blocks=$(grep -c '^all ' "$T/$name.out")
    other=$(grep -vc '^gdrtrace run: rank ' "$T/$name.out")
    # rank 17's verdict always (its verdict is not DIRECT-DMABUF), rank 33's (exit 3)
    [ "$blocks" = 2 ] && [ "$other" -le 30 ] &&
        grep -q '^expected DIRECT-DMABUF, got FALLBACK' "$T/$name.out" &&
        pass "$name: $lines lines for $N ranks: the full verdict only for ranks 17 and 33" ||
        fail "$name: $lines lines, $blocks verdict block(s), $other not a rank line"
    local notes
    notes=$(grep -c '^gdrtrace run: \(job \|plugin \|NCCL.s log: \)' "$T/$name.err")
    [ "$notes" = 0 ] && [ "$(wc -l <"$T/$name.err")" -le 3 ] &&
        grep -q "^gdrtrace run: the job's verdict, once every rank ended: gdrtrace verdict --expect dmabuf --nccl-log $T/$name $T/$name$" "$T/$name.err" &&
        pass "$name: stderr: no per-rank notes, rank 0 names the job's verdict command" ||
        fail "$name: stderr: $(head -5 "$T/$name.err")"
    [ "$(ls "$T/$name" | grep -c '\.zst$')" = $N ] && pass "$name: $N archives" ||
        fail "$name: $(ls "$T/$name" | grep -c '\.zst$') archives"
}

launch mpirun OMPI_COMM_WORLD_RANK OMPI_MCA_orte_ess_jobid ompi42
check_lines mpirun ompi42 20
"$G" verdict --expect dmabuf --nccl-log "$T/mpirun" "$T/mpirun" >"$T/job.v" 2>&1
rc=$?
[ $rc = 20 ] && grep "^all " -A1 "$T/job.v" | tr -s " \n" " " | grep -q "$N process(es)" &&
    pass "the job's verdict over $N archives: exit 20 (rank 17 fell back)" ||
    fail "job verdict: exit $rc: $(tail -3 "$T/job.v")"

launch srun SLURM_PROCID SLURM_JOB_ID 4242 --command-status
check_lines srun 4242 0

# --full: every rank its whole verdict, as before
mkdir -p "$T/full"
for r in 0 1; do
    OMPI_COMM_WORLD_RANK=$r OMPI_MCA_orte_ess_jobid=full "$G" run --full --dir "$T/full" -- "$T/job.sh" &
done >"$T/full.out" 2>"$T/full.err"
wait
[ "$(grep -c '^all ' "$T/full.out")" = 2 ] && ! grep -q '^gdrtrace run: rank ' "$T/full.out" &&
    grep -q '^gdrtrace run: plugin ' "$T/full.err" &&
    pass "--full: each rank prints its whole verdict and notes, no rank line" ||
    fail "--full: $(head -5 "$T/full.out")"
# no launcher: the whole verdict, as before
OMPI_COMM_WORLD_RANK= "$G" run --dir "$T/alone" -- sh -c "$FX dmabuf \"\$GDRTRACE_DIR/gdrtrace.a.b.\$\$.rec\" --pid \$\$" \
    >"$T/alone.out" 2>/dev/null
grep -q '^all .*DIRECT-DMABUF' "$T/alone.out" && ! grep -q '^gdrtrace run: rank ' "$T/alone.out" &&
    pass "without a launcher: the whole verdict" || fail "alone: $(cat "$T/alone.out")"
[ $fails = 0 ] && echo "test-run-launcher: ok" || { echo "$fails check(s) failed"; exit 1; }
