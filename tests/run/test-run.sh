#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-run.sh — `gdrtrace run` around the NCCL-like harness (the stand-in for a
# job on a machine without GPU or RDMA: host memory over sock, HOST-STAGED),
# with the gdrtrace of the build tree, which must find its plugin-only folder
# beside itself.  Checks:
#  * --expect host: exit 0; NCCL_NET_PLUGIN=gdrtrace reached the job and
#    loaded the plugin by name from that folder; the archive is
#    DIR/JOB.HOST.rRANK.zst and reads HOST-STAGED; NCCL's INFO log of each
#    process is copied beside it; the private folder is gone;
#  * --expect dmabuf: exit 20 and the "expected …, got …" line;
#  * a failing command: its exit code (3), the archive still written;
#  * SIGTERM to gdrtrace reaches the command's process group: 143, the
#    archive still written, nothing of the job left running;
#  * a job's NCCL_NET_PLUGIN naming another plugin: refused (125, nothing
#    run) with a message; wrapped with --inner (the stand-in inner plugin);
#    NCCL_NET_PLUGIN=gdrtrace, NCCL_NET, NCCL_DEBUG, NCCL_DEBUG_FILE kept
#    (a message each, the job sees its own values, the log read where the
#    job put it);
#  * the verdict run prints joins this run's NCCL log (--nccl-log);
#  * two ranks into one --dir, then one `gdrtrace verdict DIR` covering both
#    (and with --nccl-log DIR, both ranks' logs);
#  * COMMAND not found 127, not executable 126, usage 64, a gdrtrace with no
#    plugin beside it 125 — none leaves a private folder behind.
set -u
BUILD=${BUILD:-build/default}
G=$PWD/$BUILD/gdrtrace
H=$PWD/$BUILD/harness/harness
FAKE=$PWD/$BUILD/tests/libnccl-net-fakeinner.so
for f in "$G" "$H" "$FAKE"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "FAIL: $f is not built (make tests)"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# A clean job environment: the launcher's variables are set per case.
unset NCCL_NET_PLUGIN NCCL_NET NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE GDRTRACE_JOB \
    GDRTRACE_TRANSPORT GDRTRACE_INNER SLURM_JOB_ID SLURM_PROCID OMPI_COMM_WORLD_RANK PMI_RANK \
    PMIX_RANK PMIX_NAMESPACE OMPI_MCA_orte_ess_jobid TORCHELASTIC_RUN_ID
export GDRTRACE_DIR=$T/shm GDRTRACE_SOCKET_IFNAME=lo
mkdir -p "$GDRTRACE_DIR"
host=$(hostname)
JOB=(--abi 12 --data-only --iters 4 --max-size 256K)
no_private_left() { # WHAT: GDRTRACE_DIR holds no gdrtrace-run.* folder
    local left
    left=$(find "$GDRTRACE_DIR" -maxdepth 1 -name 'gdrtrace-run.*')
    [ -z "$left" ] && pass "$1: no private folder left" || fail "$1: left $left"
}

# 1. --expect host, a rank from Slurm.
D=$T/job1
# --full: the whole verdict and every note, as without a launcher (a rank
# alone gets one line: tests/run/test-run-launcher.sh).
(cd "$T" && SLURM_JOB_ID=42 SLURM_PROCID=3 "$G" run --full --expect host --dir "$D" -- "$H" "${JOB[@]}") \
    >"$T/1.out" 2>"$T/1.err"
rc=$?
[ $rc = 0 ] && grep -q '^all .*HOST-STAGED' "$T/1.out" && pass "--expect host: exit 0, HOST-STAGED printed" ||
    fail "--expect host: exit $rc: $(cat "$T/1.out" "$T/1.err" | tail -n 8)"
grep -q "^gdrtrace run: job 42 (GDRTRACE_JOB set from SLURM_JOB_ID)" "$T/1.err" &&
    pass "the job id comes from SLURM_JOB_ID and is said" || fail "job line: $(cat "$T/1.err")"
loaded=$(sed -n 's/.*NCCL_NET_PLUGIN: dlopen("libnccl-net-gdrtrace.so") loaded //p' "$T/1.out" | sort -u)
[ "$loaded" = "$PWD/$BUILD/nccl-net-gdrtrace/libnccl-net-gdrtrace.so" ] &&
    pass "the job loaded the plugin by name from the build tree's plugin-only folder" ||
    fail "loaded '$loaded'"
A=$D/42.$host.r3.zst
if [ -f "$A" ]; then
    "$G" verdict "$A" >"$T/1.v" 2>&1
    rc=$?
    n=$("$G" ls "$A" | grep -c " 42 ")
    [ $rc = 11 ] && [ "$n" = 2 ] && pass "archive $(basename "$A"): 2 recorders of job 42, HOST-STAGED" ||
        fail "archive: verdict exit $rc, $n recorder(s) of job 42: $(cat "$T/1.v")"
    [ "$(stat -c %a "$A")" = 600 ] && pass "the archive is 0600" || fail "archive mode $(stat -c %a "$A")"
else
    fail "no archive $A: $(ls "$D")"
fi
logs=$(ls "$D" | grep -c "^42\.$host\.r3\.nccl\.$host\.[0-9]*\.log$")
[ "$logs" = 2 ] && grep -qh "NCCL INFO NET/Plugin: Loaded net plugin gdrtrace" "$D"/*.log &&
    grep -q "^gdrtrace run: NCCL's log: 2 file(s) copied to $D/42.$host.r3\.\*" "$T/1.err" &&
    pass "NCCL's INFO log of both processes copied beside the archive" || fail "$logs logs: $(ls "$D")"
grep -q "^nccl-log: 2 file(s)" "$T/1.out" && grep -q "channel line(s) via NET/gdrtrace" "$T/1.out" &&
    pass "the verdict joins the NCCL log of this run (--nccl-log): channels via NET/gdrtrace" ||
    fail "no NCCL log joined: $(grep -A1 '^nccl-log' "$T/1.out")"
no_private_left "--expect host"

# 2. --expect dmabuf on a host-staged job.
"$G" run --expect dmabuf --dir "$T/job2" -- "$H" "${JOB[@]}" >"$T/2.out" 2>"$T/2.err"
rc=$?
[ $rc = 20 ] && grep -q "^expected DIRECT-DMABUF, got HOST-STAGED" "$T/2.out" &&
    pass "--expect dmabuf: exit 20, expected/got line" || fail "--expect dmabuf: exit $rc: $(tail -n 5 "$T/2.out")"
grep -q "GDRTRACE_JOB generated" "$T/2.err" && [ "$(ls "$T/job2"/*.p[0-9]*.zst | wc -l)" = 1 ] &&
    pass "no launcher: a generated job id, the archive named by pid" || fail "job2: $(ls "$T/job2") $(cat "$T/2.err")"

# 3. A failing command keeps its exit code; the evidence is archived anyway.
"$G" run --expect host --dir "$T/job3" -- sh -c '"$0" "$@"; exit 3' "$H" "${JOB[@]}" >"$T/3.out" 2>"$T/3.err"
rc=$?
[ $rc = 3 ] && grep -q "failed (exit 3): that is the exit code" "$T/3.err" &&
    pass "failing command: exit 3 kept" || fail "failing command: exit $rc: $(tail -n 3 "$T/3.err")"
[ "$("$G" ls "$T/job3" 2>/dev/null | grep -c exited)" = 2 ] && pass "failing command: archive written" ||
    fail "failing command: archive: $(ls "$T/job3")"

# 4. SIGTERM to gdrtrace reaches the command's group: 143, archive written.
READY=$T/ready "$G" run --dir "$T/job4" -- sh -c '"$0" "$@" && touch "$READY" && exec sleep 307' "$H" "${JOB[@]}" \
    >"$T/4.out" 2>"$T/4.err" &
runpid=$!
for _ in $(seq 600); do [ -e "$T/ready" ] && break; sleep 0.1; done
if [ -e "$T/ready" ]; then
    sleep 0.2
    kill -TERM $runpid
    wait $runpid
    rc=$?
    [ $rc = 143 ] && grep -q "killed by signal 15 (Terminated): exit 143" "$T/4.err" &&
        pass "SIGTERM forwarded: the command died of it, exit 143" ||
        fail "SIGTERM: exit $rc: $(tail -n 4 "$T/4.err")"
    [ "$("$G" ls "$T/job4" 2>/dev/null | grep -c exited)" = 2 ] && pass "SIGTERM: archive still written" ||
        fail "SIGTERM: archive: $(ls "$T/job4")"
    left=$(pgrep -f "^sleep 307$")
    [ -n "$left" ] && fail "SIGTERM: the job's sleep still runs: $left" ||
        pass "SIGTERM: nothing of the job left running"
else
    kill -TERM $runpid 2>/dev/null
    wait $runpid
    fail "SIGTERM: the job never got ready: $(tail -n 5 "$T/4.out" "$T/4.err")"
fi
no_private_left "SIGTERM"

# 5. Pre-set NCCL variables are never overridden silently.
NCCL_NET_PLUGIN=aws-ofi "$G" run --dir "$T/job5" -- touch "$T/5.ran" >"$T/5.out" 2>"$T/5.err"
rc=$?
[ $rc = 125 ] && [ ! -e "$T/5.ran" ] && grep -q "the job sets NCCL_NET_PLUGIN=aws-ofi (another net plugin).*--inner" "$T/5.err" &&
    pass "another plugin in NCCL_NET_PLUGIN: refused (125), nothing run, --inner offered" ||
    fail "other plugin: exit $rc: $(cat "$T/5.err")"
NCCL_NET_PLUGIN=$FAKE "$G" run --inner --dir "$T/job5i" -- sh -c \
    'echo "$NCCL_NET_PLUGIN $GDRTRACE_TRANSPORT $GDRTRACE_INNER" >"$0"; exec "$@"' "$T/5i.env" "$H" "${JOB[@]}" \
    >"$T/5i.out" 2>"$T/5i.err"
rc=$?
[ "$(cat "$T/5i.env" 2>/dev/null)" = "gdrtrace inner $FAKE" ] && grep -q "the job's NCCL_NET_PLUGIN=$FAKE is wrapped" "$T/5i.err" &&
    pass "--inner: the job's plugin wrapped (GDRTRACE_TRANSPORT=inner), said" ||
    fail "--inner: env '$(cat "$T/5i.env" 2>/dev/null)': $(cat "$T/5i.err")"
[ $rc = 11 ] && "$G" summary "$T/job5i" 2>/dev/null | grep -q "transport inner" &&
    pass "--inner: the job ran through the inner plugin, recorded, exit 11" ||
    fail "--inner: exit $rc: $(tail -n 5 "$T/5i.out")"
NCCL_NET_PLUGIN=gdrtrace NCCL_NET=gdrtrace NCCL_DEBUG=WARN "$G" run --dir "$T/job6" -- sh -c \
    'echo "$NCCL_NET_PLUGIN $NCCL_NET $NCCL_DEBUG ${NCCL_DEBUG_SUBSYS:-unset} ${NCCL_DEBUG_FILE:-unset}" >"$0"; exec "$@"' \
    "$T/6.env" "$H" "${JOB[@]}" >"$T/6.out" 2>"$T/6.err"
rc=$?
[ $rc = 11 ] && [ "$(cat "$T/6.env" 2>/dev/null)" = "gdrtrace gdrtrace WARN unset unset" ] &&
    pass "NCCL_NET_PLUGIN=gdrtrace, NCCL_NET, NCCL_DEBUG=WARN reach the job unchanged" ||
    fail "pre-set: exit $rc, env '$(cat "$T/6.env" 2>/dev/null)'"
for m in "NCCL_NET_PLUGIN=gdrtrace (the job's) names gdrtrace already: kept" "NCCL_NET=gdrtrace (the job's) kept" \
    "NCCL_DEBUG=WARN (the job's) kept; NCCL's log goes to the job's output"; do
    grep -qF "gdrtrace run: $m" "$T/6.err" && pass "said: $m" || fail "not said: $m: $(cat "$T/6.err")"
done
[ -z "$(ls "$T/job6" | grep '\.log$')" ] && pass "NCCL_DEBUG=WARN: no log archived (NCCL logged to the job's output)" ||
    fail "job6 logs: $(ls "$T/job6")"
NCCL_NET=Socket "$G" run --dir "$T/job7" -- true >"$T/7.out" 2>"$T/7.err"
grep -q "NCCL_NET=Socket (the job's) kept: NCCL uses only the network named Socket" "$T/7.err" &&
    pass "NCCL_NET naming another network: kept, the consequence said" || fail "NCCL_NET=Socket: $(cat "$T/7.err")"
mkdir -p "$T/joblogs"
NCCL_DEBUG_FILE=$T/joblogs/mine.%h.%p.txt "$G" run --dir "$T/job8" -- "$H" "${JOB[@]}" >"$T/8.out" 2>"$T/8.err"
grep -qF "NCCL_DEBUG_FILE=$T/joblogs/mine.%h.%p.txt (the job's) kept" "$T/8.err" &&
    [ "$(ls "$T/joblogs" | grep -c "^mine\.$host\.[0-9]*\.txt$")" = 2 ] &&
    [ "$(ls "$T/job8" | grep -c "\.mine\.$host\.[0-9]*\.txt$")" = 2 ] &&
    pass "NCCL_DEBUG_FILE of the job: kept, written there, copied from there" ||
    fail "NCCL_DEBUG_FILE: $(cat "$T/8.err"); $(ls "$T/joblogs" "$T/job8")"

# 6. Two ranks into one folder; one verdict covers the job.
for r in 0 1; do
    SLURM_JOB_ID=77 SLURM_PROCID=$r "$G" run --dir "$T/shared" -- "$H" "${JOB[@]}" >"$T/r$r.out" 2>&1 &
done
wait
for r in 0 1; do
    n=$(grep -c "^gdrtrace run: rank $r host $host verdict HOST-STAGED exit 0 archive $T/shared/77.$host.r$r.zst$" "$T/r$r.out")
    [ "$n" = 1 ] && [ "$(grep -c '^all ' "$T/r$r.out")" = 0 ] &&
        ! grep -q '^gdrtrace run: plugin ' "$T/r$r.out" &&
        pass "rank $r: its one line (HOST-STAGED, exit 0: the command's, no --expect), no verdict block, no notes" ||
        fail "rank $r: $(cat "$T/r$r.out")"
done
ls "$T/shared"/77.$host.r0.zst "$T/shared"/77.$host.r1.zst >/dev/null 2>&1 &&
    pass "two ranks: two archives, named by rank" || fail "two ranks: $(ls "$T/shared")"
out=$("$G" verdict "$T/shared" 2>&1)
rc=$?
[ $rc = 11 ] && grep -q "^all .*4 process(es)" <<<"$out" && pass "one verdict over DIR covers both ranks (4 processes)" ||
    fail "verdict DIR: exit $rc: $out"
out=$("$G" verdict --nccl-log "$T/shared" "$T/shared" 2>&1)
rc=$?
[ $rc = 11 ] && grep -q "^nccl-log: 4 file(s)" <<<"$out" && pass "verdict --nccl-log DIR DIR joins both ranks' NCCL logs" ||
    fail "verdict --nccl-log DIR: exit $rc: $out"

# 7. What run itself refuses, and what it cannot start.
"$G" run -- "$T/no-such-command" >/dev/null 2>"$T/9.err"
rc=$?
[ $rc = 127 ] && grep -q "cannot run $T/no-such-command: No such file" "$T/9.err" && pass "command not found: 127" ||
    fail "not found: exit $rc: $(cat "$T/9.err")"
: >"$T/notexec"
"$G" run -- "$T/notexec" >/dev/null 2>&1
rc=$?
[ $rc = 126 ] && pass "command not executable: 126" || fail "not executable: exit $rc"
"$G" run --dir "$T/x" >/dev/null 2>&1
rc=$?
"$G" run --expect gpu -- true >/dev/null 2>&1
rc2=$?
[ $rc = 64 ] && [ $rc2 = 64 ] && pass "no command, a bad --expect: 64" || fail "usage: exit $rc, $rc2"
mkdir -p "$T/bin" && cp "$G" "$T/bin/gdrtrace"
"$T/bin/gdrtrace" run -- touch "$T/10.ran" >/dev/null 2>"$T/10.err"
rc=$?
[ $rc = 125 ] && [ ! -e "$T/10.ran" ] && grep -q "no plugin installed with this gdrtrace" "$T/10.err" &&
    pass "no plugin beside the command: 125, said, nothing run" || fail "no plugin: exit $rc: $(cat "$T/10.err")"
no_private_left "refusals"

[ $fails = 0 ] && echo "PASS: gdrtrace run around the harness" && exit 0
echo "$fails check(s) failed"
exit 1
