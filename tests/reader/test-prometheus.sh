#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-prometheus.sh — `gdrtrace export --prometheus` as Prometheus wants it:
# `promtool check metrics` is clean; no label clashes with a target label
# (job, instance) and no per-process label (pid, rank) unless --per-process;
# samples of one host, job and communicator are summed; exited recorders
# older than --exited-within are left out with a comment counting them; a
# live one is kept however long it has been idle; --quiet silences only the
# "no recorders found" note; gdrtrace_job_verdict is one series per job,
# labelled with its recorded policy (an idle node: one NO-DATA series); the
# example alerting rules pass their unit tests.
# Skips (77) only when promtool is missing (scripts/install-deps.sh check).
# OLD_OUTPUT=FILE checks that file instead (to show the checks fail on the
# output of an older gdrtrace).
. tests/reader/lib.sh
if ! command -v promtool >/dev/null; then
    echo "skip: promtool not installed (Debian package prometheus; scripts/install-deps.sh check)"
    exit 77
fi
N=$T/node
mkdir -p "$N"
$FX dmabuf "$N/gdrtrace.job42.node-a.1001.rec" --host node-a --pid 1001 --rank 0 --comm 0x5e1a7c0ffee00001 --age 60
$FX dmabuf "$N/gdrtrace.job42.node-a.1002.rec" --host node-a --pid 1002 --rank 1 --comm 0x5e1a7c0ffee00001 --age 60
$FX host "$N/gdrtrace.job41.node-a.901.rec" --host node-a --pid 901 --rank 0 --job job41 --age 7200

labels() { # the label names used by the samples of file $1, one a line
    grep -v '^#' "$1" | sed -n 's/^[^{]*{\(.*\)} [^ ]*$/\1/p' | grep -o '[a-z_]*="' | tr -d '="' | sort -u
}
if [ -n "${OLD_OUTPUT:-}" ]; then cp "$OLD_OUTPUT" "$T/def.prom"; else
    $G export --prometheus "$N" >"$T/def.prom" || fail "export --prometheus: exit $?"
fi
out=$(promtool check metrics <"$T/def.prom" 2>&1) && pass "promtool check metrics: clean" ||
    fail "promtool check metrics: $out"
bad=$(labels "$T/def.prom" | grep -xE 'job|instance|pid|rank' | tr '\n' ' ')
[ -z "$bad" ] && labels "$T/def.prom" | grep -qx gdrtrace_job &&
    pass "default labels: gdrtrace_job, no job/instance/pid/rank" || fail "default labels: clashing or per-process: $bad"
grep -qx 'gdrtrace_messages_total{host="node-a",gdrtrace_job="job42",comm="0x5e1a7c0ffee00001",device="0",op="send"} 2000' "$T/def.prom" &&
    pass "the two ranks of one communicator are summed into one series" || fail "no summed send count"
grep -v '^#' "$T/def.prom" | grep -q 'job41' && fail "job41 (exited 2h ago) exported" ||
    pass "an exited recorder older than 15m is left out"
grep -qx '# gdrtrace: 1 exited or crashed recorder(s) left out: last activity older than --exited-within' "$T/def.prom" &&
    pass "a comment counts the recorders left out" || fail "no comment counting the left out"
grep -x 'gdrtrace_job_verdict{.*' "$T/def.prom" |
    grep -qx 'gdrtrace_job_verdict{gdrtrace_job="job42",policy_reg="dmabuf",verdict="DIRECT-DMABUF"} 1' &&
    pass "the job verdict: one series, job42's, with its policy; job41 (left out) has none" ||
    fail "job verdict: $(grep '^gdrtrace_job_verdict' "$T/def.prom")"
[ -n "${OLD_OUTPUT:-}" ] && { finish "test-prometheus: ok"; exit; }

# A verdict series per job, with the policy its recorders recorded, so that
# an alert tells a planned baseline from a finding: jp asked for peermem and
# got it; jb's host-staged process left the window (its kept one judged
# alone); jm's processes recorded two policies.
mkdir -p "$T/jobs"
$FX peermem "$T/jobs/gdrtrace.jp.n.1.rec" --host n --job jp --pid 1 --comm 0xa1 --age 60
$FX dmabuf "$T/jobs/gdrtrace.jb.n.2.rec" --host n --job jb --pid 2 --comm 0xb1 --age 60
$FX host "$T/jobs/gdrtrace.jb.n.3.rec" --host n --job jb --pid 3 --comm 0xb2 --reg dmabuf --age 7200
$FX dmabuf "$T/jobs/gdrtrace.jm.n.4.rec" --host n --job jm --pid 4 --comm 0xc1 --age 60
$FX peermem "$T/jobs/gdrtrace.jm.n.5.rec" --host n --job jm --pid 5 --comm 0xc2 --age 60
$G export "$T/jobs" >"$T/jobs.prom" || fail "export jobs: exit $?"
[ "$(grep '^gdrtrace_job_verdict' "$T/jobs.prom")" = 'gdrtrace_job_verdict{gdrtrace_job="jb",policy_reg="dmabuf",verdict="DIRECT-DMABUF"} 1
gdrtrace_job_verdict{gdrtrace_job="jm",policy_reg="mixed",verdict="MIXED"} 1
gdrtrace_job_verdict{gdrtrace_job="jp",policy_reg="peermem",verdict="DIRECT-PEERMEM"} 1' ] &&
    pass "gdrtrace_job_verdict per job with policy_reg: jb (one process left out), jm mixed, jp peermem" ||
    fail "job verdicts: $(grep '^gdrtrace_job_verdict' "$T/jobs.prom")"
$G export --exited-within 1000w "$T/jobs" | grep -qx 'gdrtrace_job_verdict{gdrtrace_job="jb",policy_reg="dmabuf",verdict="MIXED"} 1' &&
    pass "jb with both processes kept: MIXED, as verdict --job jb says ($($G verdict --job jb "$T/jobs" | awk '/^all/{print $2}'))" ||
    fail "jb whole: $($G export --exited-within 1000w "$T/jobs" | grep '^gdrtrace_job_verdict')"

# Labels that do not change from run to run: a communicator without an id
# from NCCL (ABI <= v10) is comm="none", not its process's "process host:pid";
# a value not known is "unknown", never -1.  Two runs (two pids) of one job
# make one series.
mkdir -p "$T/v10"
$FX dmabuf "$T/v10/gdrtrace.job9.node-c.501.rec" --host node-c --job job9 --pid 501 --abi 10 --age 60 --nccl -1 --no-dev
$FX dmabuf "$T/v10/gdrtrace.job9.node-c.502.rec" --host node-c --job job9 --pid 502 --abi 10 --age 60 --nccl -1 --no-dev
$G export "$T/v10" >"$T/v10.prom" || fail "export v10: exit $?"
grep -qx 'gdrtrace_messages_total{host="node-c",gdrtrace_job="job9",comm="none",device="unknown",op="send"} 2000' "$T/v10.prom" &&
    ! grep -q 'process node-c\|="-1"' "$T/v10.prom" && grep -q 'nccl_version="unknown"' "$T/v10.prom" &&
    pass "ABI v10: comm=\"none\" summed over both processes; -1 exported as \"unknown\"" ||
    fail "ABI v10 labels: $(grep -E 'messages_total.*send|recorders\{' "$T/v10.prom")"
$G export --help | tr -s ' \n' ' ' | grep -q 'quantiles 0.5/0.95/0.99 with --per-process' &&
    pass "export --help: the quantiles only with --per-process" || fail "export --help promises quantiles"
grep -q '(invariant' "$T/v10.prom" && fail "HELP text names an internal invariant" ||
    pass "HELP texts say what, not which invariant"

$G export --per-process "$N" >"$T/pp.prom" || fail "export --per-process: exit $?"
out=$(promtool check metrics <"$T/pp.prom" 2>&1) && pass "--per-process: promtool clean" ||
    fail "--per-process: promtool: $out"
labels "$T/pp.prom" | grep -qx pid && labels "$T/pp.prom" | grep -qx rank &&
    ! labels "$T/pp.prom" | grep -qxE 'job|instance' && grep -q 'quantile="0.99"' "$T/pp.prom" &&
    pass "--per-process adds pid, rank and the quantiles" || fail "--per-process: no pid/rank/quantile"
$G export --exited-within 3h "$N" >"$T/3h.prom" && grep -q 'gdrtrace_job="job41"' "$T/3h.prom" &&
    ! grep -q '^# gdrtrace: .* left out' "$T/3h.prom" &&
    pass "--exited-within 3h keeps the 2h-old recorder (and no 'left out' comment: none was)" ||
    fail "--exited-within 3h"
$G export --exited-within 30s "$N" >"$T/30s.prom" && ! grep -q 'gdrtrace_job=' "$T/30s.prom" &&
    grep -q '^# gdrtrace: 3 exited' "$T/30s.prom" && promtool check metrics <"$T/30s.prom" >/dev/null 2>&1 &&
    pass "--exited-within 30s leaves out all three, still valid" || fail "--exited-within 30s"
# A live recorder stays however long it has been idle: a writer holding one
# created 2 h ago (no event since) is exported even with --exited-within 30s.
mkdir -p "$T/live"; mkfifo "$T/hold"
$FX dmabuf "$T/live/gdrtrace.job43.node-b.held.rec" --host node-b --job job43 --age 7200 --hold \
    <"$T/hold" >"$T/hold.out" &
exec {HOLD_FD}>"$T/hold"
trap 'exec {HOLD_FD}>&-; rm -rf "$T"' EXIT
for _ in $(seq 200); do grep -q ready "$T/hold.out" 2>/dev/null && break; sleep 0.05; done
$G export --exited-within 30s "$T/live" >"$T/live.prom"
grep -q '^gdrtrace_recorders{host="node-b",gdrtrace_job="job43",state="live",' "$T/live.prom" &&
    ! grep -q '^# gdrtrace: .* left out' "$T/live.prom" &&
    grep -qx 'gdrtrace_job_verdict{gdrtrace_job="job43",policy_reg="dmabuf",verdict="DIRECT-DMABUF"} 1' "$T/live.prom" &&
    pass "a live recorder idle for 2 h is kept with --exited-within 30s" ||
    fail "live recorder idle 2 h: $(grep -v '^# [HT]' "$T/live.prom" | head -3)"
exec {HOLD_FD}>&-
# --quiet (the timer's): an idle node says nothing; an unreadable input still does
mkdir -p "$T/idle"
$G export --quiet -o "$T/idle.prom" "$T/idle" 2>"$T/err"; rc=$?
[ $rc = 0 ] && [ ! -s "$T/err" ] && promtool check metrics <"$T/idle.prom" >/dev/null 2>&1 &&
    grep -qx 'gdrtrace_job_verdict{verdict="NO-DATA"} 1' "$T/idle.prom" &&
    $G export "$T/idle" 2>&1 >/dev/null | grep -q 'no recorders found' &&
    pass "--quiet: no recorder, exit 0, nothing on stderr (the note without it)" ||
    fail "--quiet on an empty folder: exit $rc, stderr: $(head -2 "$T/err")"
$G export --quiet "$T/nothere" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "nothere: No such file" "$T/err" && ! grep -q 'no recorders found' "$T/err" &&
    pass "--quiet: a missing folder is still an error (exit 2, named)" || fail "--quiet, missing folder: exit $rc"
$G export --exited-within 15 "$N" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 64 ] && grep -q "not a duration" "$T/err" && pass "--exited-within 15: usage error" ||
    fail "--exited-within 15: exit $rc"
# the alerting rules of docs/examples/prometheus-alerts.yml: valid, and each
# fires where and when its unit test says (tests/reader/prometheus-alerts.test.yml)
out=$(promtool check rules docs/examples/prometheus-alerts.yml 2>&1) && pass "promtool check rules: clean" ||
    fail "promtool check rules: $out"
out=$(promtool test rules tests/reader/prometheus-alerts.test.yml 2>&1) && pass "promtool test rules: every alert as expected" ||
    fail "promtool test rules: $out"
finish "test-prometheus: ok"
