#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run-launcher.sh — `gdrtrace run` as mpirun and srun start it: 64 ranks
# at once, each with the launcher's variables (OMPI_COMM_WORLD_RANK and
# OMPI_MCA_orte_ess_jobid; SLURM_PROCID and SLURM_JOB_ID), into one --dir,
# their stdout and stderr merged as a launcher merges them.  Each rank's job
# is a stand-in that writes a fixture recorder (DIRECT-DMABUF; rank 17's
# fell back) and an NCCL log into the private folder; rank 33's fails (3).
# Checks:
#  * one line per rank (rank, host, verdict, exit, archive) whatever the
#    verdict or the exit, no verdict block, no per-rank notes: the log grows
#    by one line per rank (the details are in the rank's archive);
#  * the exit codes a launcher collects: by default (no --expect) the
#    command's: 0, and 3 for rank 33's own failure, so an OpenMPI-like
#    launcher that ends the job at the first non-zero rank ends it only for
#    a command that failed; with --expect dmabuf (a gate) 20 for rank 17;
#    with --command-status 0 for rank 17 again (one rank);
#  * rank 0 names the command that judges the job, and that command
#    (verdict --expect dmabuf --nccl-log DIR DIR) exits 20 over 64 archives;
#  * torchrun's RANK with WORLD_SIZE is a launcher's rank too;
#  * a launcher given as COMMAND (mpirun, srun, torchrun --nnodes 2) is
#    refused (exit 64), the per-rank line to use printed, nothing run.
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
        (env "$rv=$r" "$jv=$id" "$G" run --dir "$T/$name" "$@" -- "$T/job.sh"
         echo $? >"$T/$name.rc/$r") &
    done >"$T/$name.out" 2>"$T/$name.err"
    wait
}
check_lines() { # NAME JOBID EXIT17 EXPECT: one line per rank, no verdict block
    local name=$1 id=$2 e17=$3 ex=$4 bad=0 r want
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
    # one line per rank whatever the verdict (17) or the exit (17, 33)
    [ "$blocks" = 0 ] && [ "$other" = 0 ] && [ "$lines" = $N ] &&
        pass "$name: $lines lines for $N ranks, no verdict block (rank 17 fell back, 33 failed)" ||
        fail "$name: $lines lines, $blocks verdict block(s), $other not a rank line"
    local notes
    notes=$(grep -c '^gdrtrace run: \(job \|plugin \|NCCL.s log: \)' "$T/$name.err")
    [ "$notes" = 0 ] && [ "$(wc -l <"$T/$name.err")" -le 3 ] &&
        grep -q "^gdrtrace run: the job's verdict, once every rank ended: gdrtrace verdict$ex --nccl-log $T/$name $T/$name$" "$T/$name.err" &&
        pass "$name: stderr: no per-rank notes, rank 0 names the job's verdict command" ||
        fail "$name: stderr: $(head -5 "$T/$name.err")"
    [ "$(ls "$T/$name" | grep -c '\.zst$')" = $N ] && pass "$name: $N archives" ||
        fail "$name: $(ls "$T/$name" | grep -c '\.zst$') archives"
}

# the default (srun's variables): each rank exits with its command's status
launch srun SLURM_PROCID SLURM_JOB_ID 4241
check_lines srun 4241 0 ""
aborts=$(cat "$T"/srun.rc/* | grep -vcx 0)
[ "$aborts" = 1 ] && [ "$(cat "$T/srun.rc/33")" = 3 ] &&
    pass "default under a launcher: only rank 33 (its command failed) exits non-zero; a verdict aborts no rank" ||
    fail "default: $aborts rank(s) exit non-zero"

# --expect: the gate the operator asked for (OpenMPI's variables)
launch mpirun OMPI_COMM_WORLD_RANK OMPI_MCA_orte_ess_jobid ompi42 --expect dmabuf
check_lines mpirun ompi42 20 " --expect dmabuf"
"$G" verdict --expect dmabuf --nccl-log "$T/mpirun" "$T/mpirun" >"$T/job.v" 2>&1
rc=$?
[ $rc = 20 ] && grep "^all " -A1 "$T/job.v" | tr -s " \n" " " | grep -q "$N process(es)" &&
    pass "the job's verdict over $N archives: exit 20 (rank 17 fell back)" ||
    fail "job verdict: exit $rc: $(tail -3 "$T/job.v")"

# --command-status beside --expect: the command's status again (rank 17 fell back)
SLURM_PROCID=17 SLURM_JOB_ID=4242 "$G" run --expect dmabuf --command-status --dir "$T/cs" -- "$T/job.sh" \
    >"$T/cs.out" 2>"$T/cs.err"
rc=$?
[ $rc = 0 ] && grep -qx "gdrtrace run: rank 17 host $host verdict FALLBACK exit 0 archive $T/cs/4242.$host.r17.zst" "$T/cs.out" &&
    pass "--expect with --command-status: a FALLBACK rank exits 0 (its command's)" ||
    fail "--command-status: exit $rc: $(cat "$T/cs.out" "$T/cs.err")"

# torchrun's workers: RANK with WORLD_SIZE (and TORCHELASTIC_RUN_ID the job)
RANK=5 WORLD_SIZE=8 TORCHELASTIC_RUN_ID=te7 "$G" run --dir "$T/torch" -- \
    sh -c "$FX fallback \"\$GDRTRACE_DIR/gdrtrace.te7.h.\$\$.rec\" --pid \$\$ --job te7" \
    >"$T/torch.out" 2>"$T/torch.err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T/torch.out")" = 1 ] &&
    grep -q "^gdrtrace run: rank 5 host $host verdict FALLBACK exit 0 archive $T/torch/te7.$host.r5.zst$" "$T/torch.out" &&
    pass "torchrun (RANK, WORLD_SIZE): one line, the command's exit 0 for a FALLBACK" ||
    fail "torchrun: exit $rc: $(cat "$T/torch.out" "$T/torch.err")"
RANK=5 "$G" run --dir "$T/bare" -- sh -c "$FX dmabuf \"\$GDRTRACE_DIR/gdrtrace.a.b.\$\$.rec\" --pid \$\$" \
    >"$T/bare.out" 2>/dev/null
grep -q '^all .*DIRECT-DMABUF' "$T/bare.out" && pass "RANK without WORLD_SIZE: not a launcher" ||
    fail "bare RANK: $(cat "$T/bare.out")"

# a launcher as COMMAND: refused, the per-rank line printed, nothing run
refused() { # WANT-LINE COMMAND...
    local want=$1
    shift
    rm -rf "$T/ref" "$T/ran"
    "$G" run --dir "$T/ref" -- "$@" >"$T/ref.out" 2>"$T/ref.err"
    local rc=$?
    [ $rc = 64 ] && [ ! -e "$T/ran" ] && [ -z "$(ls "$GDRTRACE_DIR")" ] && [ ! -s "$T/ref.out" ] &&
        grep -q "is a launcher" "$T/ref.err" && grep -qxF "  $want" "$T/ref.err" &&
        pass "refused, exit 64, with the line: $want" ||
        fail "$1: exit $rc: $(cat "$T/ref.out" "$T/ref.err")"
}
mkdir -p "$T/bin"
for l in mpirun srun torchrun; do printf '#!/bin/sh\n: >"%s/ran"\n' "$T" >"$T/bin/$l"; chmod +x "$T/bin/$l"; done
refused "$T/bin/mpirun -np 16 -H a,b -x NCCL_DEBUG gdrtrace run --dir $T/ref -- ./train --lr 0.1" \
    "$T/bin/mpirun" -np 16 -H a,b -x NCCL_DEBUG ./train --lr 0.1
refused "$T/bin/srun -N 2 --ntasks-per-node=8 gdrtrace run --dir $T/ref -- python train.py" \
    "$T/bin/srun" -N 2 --ntasks-per-node=8 python train.py
refused "$T/bin/torchrun --nnodes 2 --nproc-per-node 8 --no-python gdrtrace run --dir $T/ref -- python train.py" \
    "$T/bin/torchrun" --nnodes 2 --nproc-per-node 8 train.py
PATH=$T/bin:$PATH "$G" run --dir "$T/one" -- torchrun --nnodes 1 --nproc-per-node 2 x.py >/dev/null 2>&1
[ -e "$T/ran" ] && pass "torchrun on one node: run as a command (one gdrtrace run is one rank with its workers)" ||
    fail "torchrun --nnodes 1 was not run"

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
