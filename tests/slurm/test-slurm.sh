#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-slurm.sh — the canary path an operator takes on a cluster, under a
# real Slurm: Debian's slurmctld, slurmd and munged, one node, started here
# with a generated configuration (no cgroups: proctrack/linuxproc,
# task/none, select/linear), every state, log and socket under the test's
# scratch folder, the daemons ended on every exit path.  One batch job of
# two steps:
#  1. the canary: `srun -n2 gdrtrace run --dir CANARY -- harness …`, each
#     task running the demo's two processes (tests/harness, the plugin driven
#     as NCCL drives it) under its own `gdrtrace run`;
#  2. a plain step, `srun -n1 harness …` without `gdrtrace run`: recorders
#     left in GDRTRACE_DIR, as a job with the plugin configured site-wide
#     leaves them.
# Checks: the job succeeds (a verdict ends no rank); one line per rank
# (rank, host, verdict, exit 0, archive), rank 0 naming the job's verdict
# command; the shipped epilog (scripts/epilog/slurm-epilog.sh), run by
# slurmd at the job's end, archives step 2's recorders to
# ARCHIVE/JOB/NODE.zst and prunes them; `gdrtrace verdict` of the job from
# its archives (the canary's and the epilog's) judges every process.
# Skips (77) only where it cannot run: not root (slurmd starts jobs as
# their user), or the packages missing (scripts/install-deps.sh check
# installs slurmctld, slurmd, slurm-client and munge).
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
H=$PWD/$BUILD/harness/harness
EPILOG=$PWD/scripts/epilog/slurm-epilog.sh
for f in "$G" "$H"; do [ -x "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "skip: not root: slurmd starts a job's processes as the job's user"; exit 77; }
for b in slurmctld slurmd munged srun sbatch squeue scontrol; do
    p=$(command -v $b || ls /usr/sbin/$b 2>/dev/null)
    [ -n "$p" ] || {
        echo "skip: $b not installed (Debian packages slurmctld slurmd slurm-client munge: scripts/install-deps.sh check)"
        exit 77
    }
done
PATH=$PATH:/usr/sbin

T=$(mktemp -d)
export SLURM_CONF=$T/slurm.conf
pids() { local f; for f in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/pid"; do [ -s "$f" ] && cat "$f"; done; }
cleanup() {
    # the jobs of this cluster first, then the daemons this test started
    scancel -u root >/dev/null 2>&1
    local p
    for p in $(pids); do kill "$p" 2>/dev/null; done
    for _ in $(seq 1 50); do
        local alive=0
        for p in $(pids); do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in $(pids); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
CLUSTER=gdrt$$
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK PMIX_NAMESPACE \
    OMPI_MCA_orte_ess_jobid TORCHELASTIC_RUN_ID RANK WORLD_SIZE GDRTRACE_RUN_WAIT
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log" "$T/shm" "$T/canary" "$T/archive"
chmod 700 "$T/munge"
export GDRTRACE_DIR=$T/shm

# Two free TCP ports (slurmctld's, slurmd's), none of another test's.
used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 30000))
        grep -qx "$p" <<<"$used" || { used="$used"$'\n'"$p"; echo "$p"; return; }
    done
    echo 0
}
CPORT=$(free_port)
DPORT=$(free_port)

# munge: a key of its own, its socket here
dd if=/dev/urandom of="$T/munge/key" bs=1024 count=1 status=none && chmod 400 "$T/munge/key"
munged -f --key-file="$T/munge/key" --socket="$T/munge/sock" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" ||
    { echo "FAIL: munged did not start: $(tail -3 "$T/munge/log" 2>/dev/null)"; exit 1; }

NODE=$(hostname -s)
# The epilog as a site installs it: the shipped script, its settings from
# the environment a wrapper gives it (slurmd runs it with its own), its
# lines kept in a file (slurmd discards an epilog's output).
cat >"$T/epilog" <<EOF
#!/bin/sh
export GDRTRACE_DIR="$T/shm" GDRTRACE_ARCHIVE_DIR="$T/archive" GDRTRACE_BIN="$G" GDRTRACE_EPILOG_SYSLOG=0
exec bash "$EPILOG" >>"$T/epilog.log" 2>&1
EOF
chmod 755 "$T/epilog"
cat >"$SLURM_CONF" <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CPORT
SlurmdPort=$DPORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
Epilog=$T/epilog
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=canary Nodes=$NODE Default=YES MaxTime=5 State=UP
EOF
slurmctld -i -f "$SLURM_CONF" || { echo "FAIL: slurmctld did not start: $(tail -5 "$T/log/slurmctld.log")"; exit 1; }
slurmd -N "$NODE" -f "$SLURM_CONF" || { echo "FAIL: slurmd did not start: $(tail -5 "$T/log/slurmd.log")"; exit 1; }
for _ in $(seq 1 300); do
    sinfo -h -o %t 2>/dev/null | grep -qx idle && break
    sleep 0.1
done
sinfo -h -o %t 2>/dev/null | grep -qx idle && pass "slurmctld, slurmd, munged up (ports $CPORT, $DPORT): node $NODE idle" ||
    { fail "the node never became idle: $(sinfo 2>&1 | tail -2) $(tail -3 "$T/log/slurmd.log")"; exit 1; }

# The job: the canary script of docs/rollout.md (srun per rank, no gate),
# then a plain step.
JOB_ARGS="--abi 12 --data-only --iters 4 --max-size 256K"
cat >"$T/job.sh" <<EOF
#!/bin/sh
srun -n2 "$G" run --dir "$T/canary" -- "$H" $JOB_ARGS >"$T/canary.out" 2>"$T/canary.err"
echo "canary exit \$?"
srun -n1 "$H" $JOB_ARGS >"$T/plain.out" 2>&1
echo "plain exit \$?"
EOF
chmod 755 "$T/job.sh"
timeout 120 sbatch --wait -n2 -t 2 -o "$T/job.out" "$T/job.sh" >"$T/sbatch.out" 2>&1
rc=$?
JOB=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$T/sbatch.out")
[ $rc = 0 ] && [ -n "$JOB" ] && grep -qx "canary exit 0" "$T/job.out" && grep -qx "plain exit 0" "$T/job.out" &&
    pass "job $JOB: the canary step (srun -n2 gdrtrace run) and the plain step exit 0" ||
    fail "job '$JOB': sbatch exit $rc: $(cat "$T/sbatch.out" "$T/job.out" 2>/dev/null | tail -5) $(tail -5 "$T/canary.err" 2>/dev/null)"

host=$(hostname)
bad=0
for r in 0 1; do
    grep -qx "gdrtrace run: rank $r host $host verdict HOST-STAGED exit 0 archive $T/canary/$JOB.$host.r$r.zst" "$T/canary.out" ||
        bad=1
done
# (the harness's own lines, [v12 …] and harness: …, are the job's output)
[ $bad = 0 ] && [ "$(grep -vc -e '^\[v12' -e '^harness: ' "$T/canary.out")" = 2 ] &&
    [ "$(grep -c '^gdrtrace run: ' "$T/canary.err")" = 1 ] &&
    grep -qx "gdrtrace run: the job's verdict, once every rank ended: gdrtrace verdict --nccl-log $T/canary $T/canary" "$T/canary.err" &&
    pass "one line per rank (HOST-STAGED, exit 0), rank 0 names the job's verdict command" ||
    fail "the ranks' lines: $(grep -v '^\[v\|^harness' "$T/canary.out" "$T/canary.err" | head -8)"

# The epilog runs when the job ends, while slurmd holds the job as completing.
for _ in $(seq 1 300); do
    [ -z "$(squeue -h -j "$JOB" 2>/dev/null)" ] && grep -q "archived" "$T/epilog.log" 2>/dev/null && break
    sleep 0.1
done
arc=$T/archive/$JOB/$NODE.zst
n=$("$G" ls "$arc" 2>/dev/null | awk 'NR > 1' | wc -l)
left=$(ls "$T/shm" | grep -c "^gdrtrace\.$JOB\.")
[ "$n" = 2 ] && [ "$left" = 0 ] && grep -q "job $JOB on $NODE: archived: $arc: 2 recorder(s)" "$T/epilog.log" &&
    pass "the shipped epilog, run by slurmd at the job's end: the plain step's 2 recorders archived to $JOB/$NODE.zst, pruned" ||
    fail "epilog: $n recorder(s) in $arc, $left left in GDRTRACE_DIR: $(cat "$T/epilog.log" 2>/dev/null | tail -5)"
[ -z "$(ls "$T/shm" | grep '^gdrtrace-run\.')" ] && pass "no private folder of gdrtrace run left behind" ||
    fail "left in GDRTRACE_DIR: $(ls "$T/shm")"

# The job's verdict from its archives: the canary's, with NCCL's logs, gated
# on the demo's truth (host memory over TCP); then every archive of the job.
"$G" verdict --expect host --nccl-log "$T/canary" "$T/canary" >"$T/v1" 2>&1
rc=$?
[ $rc = 0 ] && grep "^all " -A2 "$T/v1" | tr -s ' \n' ' ' | grep -q "4 process(es)" &&
    pass "gdrtrace verdict --expect host of the canary's archives: exit 0, 4 processes (2 ranks x 2)" ||
    fail "canary verdict: exit $rc: $(cat "$T/v1")"
"$G" verdict --job "$JOB" "$T/canary" "$T/archive/$JOB" >"$T/v2" 2>&1
rc=$?
[ $rc = 11 ] && grep "^all " -A2 "$T/v2" | tr -s ' \n' ' ' | grep -q "HOST-STAGED .*6 process(es)" &&
    pass "gdrtrace verdict --job $JOB of every archive of the job: HOST-STAGED (11), 6 processes" ||
    fail "job verdict: exit $rc: $(cat "$T/v2")"

[ $fails = 0 ] && echo "test-slurm: ok" || { echo "$fails check(s) failed"; exit 1; }
