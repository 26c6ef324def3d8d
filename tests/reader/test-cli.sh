#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-cli.sh — the gdrtrace command on fixture recorders with known content:
#  * `verdict` prints the right verdict and exit code for each kind, --expect
#    gives 0 on a match and 20 otherwise;
#  * `summary` shows the registration counts the fixture wrote;
#  * two nodes' recorders of one communicator merge into one line (commId);
#  * `dump` + `summary` of the archive equals `summary` of the live files;
#  * `ls` tells exited from crashed, and says live only for a process that
#    holds the recorder open (not a reused pid, not another pid namespace's);
#  * a truncated recorder gives a message naming the file and exit 2, no crash;
#  * every subcommand answers --help with exit 0.
. "$(dirname "$0")/lib.sh"

declare -A CODE=([dmabuf]=0 [peermem]=10 [host]=11 [mixed]=12 [fallback]=13 [error]=14 [nodata]=15)
declare -A NAME=([dmabuf]=DIRECT-DMABUF [peermem]=DIRECT-PEERMEM [host]=HOST-STAGED [mixed]=MIXED
                 [fallback]=FALLBACK [error]=ERROR [nodata]=NO-DATA)
for k in dmabuf peermem host mixed fallback error nodata; do
    mkdir -p "$T/$k"
    $FX "$k" "$T/$k/gdrtrace.job42.node-a.4242.rec" || { fail "fixture $k"; continue; }
    out=$($G verdict "$T/$k"); rc=$?
    if [ "$rc" = "${CODE[$k]}" ] && grep -q "^all .*${NAME[$k]}" <<<"$out" &&
       grep -q "^comm 0x1234abcd5678ef00 .*${NAME[$k]}" <<<"$out"; then
        pass "verdict $k: ${NAME[$k]}, exit $rc"
    else
        fail "verdict $k: exit $rc (want ${CODE[$k]}), output: $out"
    fi
done
$G verdict --expect dmabuf "$T/dmabuf" >/dev/null; rc=$?
[ $rc = 0 ] && pass "--expect dmabuf on DMA-BUF run: exit 0" || fail "--expect dmabuf match: exit $rc"
$G verdict --expect dmabuf "$T/host" >/dev/null; rc=$?
[ $rc = 20 ] && pass "--expect dmabuf on host run: exit 20" || fail "--expect dmabuf mismatch: exit $rc"
$G verdict --expect host "$T/host" >/dev/null; rc=$?
[ $rc = 0 ] && pass "--expect host on host run: exit 0" || fail "--expect host: exit $rc"
out=$($G verdict "$T/host")
grep -q "host memory only" <<<"$out" && pass "HOST-STAGED says why (host memory only)" ||
    fail "HOST-STAGED without reason: $out"
out=$($G verdict "$T/dmabuf" | tr -s ' \n' '  ') # evidence wraps at 100 columns
grep -q "LL buffers" <<<"$out" && pass "DIRECT-DMABUF explains the host LL registrations" ||
    fail "no LL explanation: $out"
$G verdict --json "$T/fallback" | grep -q '"verdict": "FALLBACK"' && pass "verdict --json" ||
    fail "verdict --json"

# summary counts (dmabuf fixture: 8 regMrDmaBuf->dmabuf, 2 regMr(HOST)->host)
out=$($G summary --full "$T/dmabuf")
if grep -Eq 'regMrDmaBuf +8 +0 +0 +0' <<<"$out" && grep -Eq 'regMr\(HOST\) +0 +0 +2 +0' <<<"$out"; then
    pass "summary shows the fixture's registration matrix"
else
    fail "summary counts: $out"
fi
grep -Eq 'reg +100 ' <<<"$out" && grep -q 'histogram reg' <<<"$out" &&
    pass "summary: latency table and bars" || fail "summary latency: $out"
$G summary --json "$T/dmabuf" | grep -q '"code": "DIRECT-DMABUF"' && pass "summary --json" ||
    fail "summary --json"

# many nodes: one communicator, two hosts
mkdir -p "$T/job"
$FX dmabuf "$T/job/gdrtrace.job42.node-a.100.rec" --host node-a --pid 100 --rank 0
$FX dmabuf "$T/job/gdrtrace.job42.node-b.200.rec" --host node-b --pid 200 --rank 1
$FX host "$T/job/gdrtrace.job42.node-b.201.rec" --host node-b --pid 201 --rank 1 --comm 0x77 \
    --state live   # pid 201 of another machine's boot: crashed
out=$($G verdict "$T/job"); rc=$?
if grep -q "^comm 0x1234abcd5678ef00 .*DIRECT-DMABUF" <<<"$out" && grep -q "^comm 0x77 .*HOST-STAGED" <<<"$out" &&
   grep -q "^all .*MIXED" <<<"$out" && [ $rc = 12 ]; then
    pass "two nodes: per-communicator lines merged by commId, whole input MIXED (exit 12)"
    if grep -Eq '^node node-a +DIRECT-DMABUF +1 process' <<<"$out" && grep -Eq '^node node-b +MIXED +2 process' <<<"$out"; then
        pass "two nodes: one verdict line per node"
    else fail "per-node verdict lines: $out"; fi
else
    fail "multi-node verdict: exit $rc: $out"
fi
$G summary --full "$T/job" | grep -Eq '^   0x1234abcd5678ef00 +2 +2 +16 ' && pass "summary merges the comm across 2 processes on 2 hosts" ||
    fail "summary merge: $($G summary --full --no-bars "$T/job" | grep -A4 'communicators across')"

mkdir -p "$T/twojobs"; cp "$T/job/"*.rec "$T/twojobs/"
$FX error "$T/twojobs/gdrtrace.other.node-c.300.rec" --job other --host node-c --pid 300
$G verdict "$T/twojobs" >/dev/null; rc1=$?
$G verdict --job job42 "$T/twojobs" >/dev/null; rc2=$?
[ $rc1 = 14 ] && [ $rc2 = 12 ] && pass "--job keeps one job's recorders (ERROR of another job ignored)" ||
    fail "--job: exit $rc1 / $rc2"

# dump + summary of the archive == summary of the live files
$G dump -o "$T/job.zst" "$T/job" >/dev/null || fail "dump"
# (the next: step names the input given: it ends either output)
a=$($G summary --full "$T/job" | grep -v '^   source' | sed '/^ *next: /,$d')
b=$($G summary --full "$T/job.zst" | grep -v '^   source' | sed '/^ *next: /,$d')
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass "summary of the archive equals summary of the live files"
else fail "archive summary differs: $(diff <(echo "$a") <(echo "$b") | head -20)"; fi
a=$($G verdict "$T/job" | sed '/^next: /,$d'); b=$($G verdict "$T/job.zst" | sed '/^next: /,$d')
[ "$a" = "$b" ] && pass "verdict of the archive equals verdict of the live files" || fail "archive verdict differs"
mkdir -p "$T/arcs"; cp "$T/job.zst" "$T/arcs/node-all.zst"
$G verdict "$T/arcs" >/dev/null; rc=$?
[ $rc = 12 ] && pass "a folder of archives is read as one job" || fail "folder of archives: exit $rc"

# ls: states
out=$($G ls "$T/job")
if grep -Eq 'node-a +100 .*exited' <<<"$out" && grep -Eq 'node-b +201 .*(crashed|live)' <<<"$out"; then
    pass "ls: exited and never-closed recorders told apart"
else fail "ls: $out"; fi
$FX dmabuf "$T/empty/gdrtrace.job42.node-c.99999999.rec" --pid 99999999 --state live
GDRTRACE_DIR=$T/empty $G ls | grep -q 'crashed' && pass "ls: LIVE recorder with a dead pid is crashed" ||
    fail "ls crashed: $(GDRTRACE_DIR=$T/empty $G ls)"
rm -f "$T/empty/"*

# ls: "live" needs proof that the process with the pid is the writer (tools/lib/liveness.c).
# The writer: a process that created the recorder after it started and holds it open.
mkdir -p "$T/held"
coproc HOLD { exec "$FX" dmabuf "$T/held/gdrtrace.j.h.held.rec" --host "$(hostname)" --hold; }
holder=$HOLD_PID   # bash unsets HOLD_PID once the coproc ends
read -r ready <&"${HOLD[0]}"
$G ls "$T/held" | grep -Eq " $holder .* live " && pass "ls: the writer holding its recorder is live" ||
    fail "ls held: $($G ls "$T/held")"
exec {HOLD[1]}>&-
wait "$holder"
$G ls "$T/held" | grep -q ' crashed ' && pass "ls: that recorder, never closed, is crashed once its writer is gone" ||
    fail "ls held, writer gone: $($G ls "$T/held")"
# A pid that exists here but is not the writer: the writer's pid in another pid namespace.
mkdir -p "$T/pidns"
$FX dmabuf "$T/pidns/gdrtrace.j.h.$$.rec" --pid $$ --state live --start-mono now
$G ls "$T/pidns" | grep -q ' unknown ' && pass "ls: a pid that exists here but does not hold the file is unknown, not live" ||
    fail "ls pid of another namespace: $($G ls "$T/pidns")"
# The same pid, but the recorder was created before that process started: the pid was reused.
$FX dmabuf "$T/pidns/gdrtrace.j.h.$$.rec" --pid $$ --state live --start-mono 1000
$G ls "$T/pidns" | grep -q ' crashed ' && pass "ls: a pid whose process started after the recorder was created is crashed" ||
    fail "ls reused pid: $($G ls "$T/pidns")"
# A real writer in its own pid namespace (where it is pid 1), read from ours.
rm -f "$T/pidns/"*
if unshare --user --map-root-user --pid --fork true 2>/dev/null; then
    coproc NSW { exec unshare --user --map-root-user --pid --fork "$FX" dmabuf "$T/pidns/gdrtrace.j.h.1.rec" --hold; }
    holder=$NSW_PID
    read -r ready <&"${NSW[0]}"
    out=$($G ls "$T/pidns")
    grep -Eq ' 1 .* unknown ' <<<"$out" && grep -q 'unknown (other pid namespace)' <<<"$out" &&
        pass "ls: a writer in another pid namespace is unknown (other pid namespace), not live" ||
        fail "ls writer in a pid namespace: $out"
    out=$($G prune --dry-run "$T/pidns"); rc=$?
    grep -Eq '^kept +unknown .*unknown \(other pid namespace\)' <<<"$out" && [ $rc = 0 ] &&
        pass "prune keeps a recorder of another pid namespace" || fail "prune other pid namespace: exit $rc: $out"
    exec {NSW[1]}>&-
    wait "$holder"
    # read from inside the writer's namespace (its own /proc): the writer is live there
    mkdir -p "$T/pidns-in"
    out=$(unshare --user --map-root-user --pid --fork --mount-proc bash -c '
        coproc W { exec "$1" dmabuf "$2/gdrtrace.j.h.in.rec" --hold; }
        read -r ready <&"${W[0]}"
        "$3" ls "$2"
        exec {W[1]}>&-   # not before: bash would exec ls in its place, closing it at once
        wait' _ "$FX" "$T/pidns-in" "$G" 2>&1)
    if grep -q 'mount' <<<"$out" && ! grep -q ' live ' <<<"$out"; then
        echo "note: unshare --mount-proc not permitted here, the in-namespace reader not run"
    else
        grep -Eq ' 2 .* live ' <<<"$out" && pass "ls in the writer's own pid namespace: live" ||
            fail "ls inside the writer's namespace: $out"
    fi
else
    echo "note: unshare --user --pid not permitted here, the real pid-namespace case not run"
fi
rm -f "$T/pidns/"*
# Format 1.4 names the writer's pid namespace and process start (tools/lib/liveness.c):
# another namespace whose pid number does not exist here is not "crashed" by that number;
$FX dmabuf "$T/pidns/gdrtrace.j.h.o.rec" --pid 99999999 --state live --pidns 1:2
out=$($G ls "$T/pidns")
grep -q ' unknown ' <<<"$out" && grep -q 'unknown (other pid namespace)' <<<"$out" &&
    pass "ls: a missing pid of another pid namespace is unknown, not crashed" || fail "ls other namespace, missing pid: $out"
$G ls --json "$T/pidns" | grep -q '"state_why": *"other pid namespace"' &&
    pass "ls --json: state_why other pid namespace" || fail "ls --json: $($G ls --json "$T/pidns")"
rm -f "$T/pidns/"*
# a writer that could not read its namespace: unknown, not judged by pid number;
$FX dmabuf "$T/pidns/gdrtrace.j.h.n.rec" --pid 99999999 --state live --pidns none
out=$($G ls "$T/pidns")
grep -q 'unknown (pid namespace unreadable)' <<<"$out" &&
    pass "ls: a writer whose pid namespace was not recorded is unknown" || fail "ls unreadable namespace: $out"
rm -f "$T/pidns/"*
# our namespace, that pid runs, created after it started, but it started at another tick: reused
$FX dmabuf "$T/pidns/gdrtrace.j.h.r.rec" --pid $$ --state live --start-mono now --start-ticks 1
$G ls "$T/pidns" | grep -q ' crashed ' && pass "ls: a pid whose start differs from the writer's is crashed (reused)" ||
    fail "ls reused pid by start ticks: $($G ls "$T/pidns")"
# the same start: the existing rules (it does not hold the file: unknown, no namespace words)
$FX dmabuf "$T/pidns/gdrtrace.j.h.r.rec" --pid $$ --state live --start-mono now \
    --start-ticks "$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)"
out=$($G ls "$T/pidns")
grep -q ' unknown ' <<<"$out" && ! grep -q 'namespace' <<<"$out" &&
    pass "ls: that pid with the writer's start, not holding the file, is unknown" || fail "ls same start: $out"
rm -f "$T/pidns/"*
# a 1.3 file (no namespace, no start): today's rules, a missing pid is crashed
$FX dmabuf "$T/pidns/gdrtrace.j.h.3.rec" --pid 99999999 --state live --minor 3
out=$($G ls "$T/pidns")
grep -q ' crashed ' <<<"$out" && pass "ls: a format 1.3 recorder with a missing pid is crashed" || fail "ls 1.3: $out"
rm -f "$T/pidns/"*

# diff: only GDRTRACE_REG differs -> no warning; another kernel and NCCL -> warning naming both
mkdir -p "$T/A" "$T/B" "$T/C"
$FX dmabuf "$T/A/gdrtrace.job42.node-a.1.rec" --pid 1
$FX peermem "$T/B/gdrtrace.job42.node-a.2.rec" --pid 2
$FX peermem "$T/C/gdrtrace.job42.node-a.3.rec" --pid 3 --kernel 6.8.0-other --nccl 22704
out=$($G diff "$T/A" "$T/B" 2>&1); rc=$?
if [ $rc = 0 ] && ! grep -q WARNING <<<"$out" && grep -Eq 'dmabuf +8 +80.0% +0 ' <<<"$out" &&
   grep -Eq 'reg +p50 .* 1.00x' <<<"$out"; then
    pass "diff of runs differing only in GDRTRACE_REG: no warning, method mix and ratios"
else fail "diff A B: exit $rc: $out"; fi
out=$($G diff "$T/A" "$T/C" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q 'WARNING' <<<"$out" && grep -q 'kernel_release: A "6.1.0-test" vs B "6.8.0-other"' <<<"$out" &&
   grep -q 'NCCL version: A 22803 vs B 22704' <<<"$out"; then
    pass "diff of runs with another kernel and NCCL: loud warning naming both, exit 1"
else fail "diff A C: exit $rc: $out"; fi
$G diff --json "$T/A" "$T/C" | grep -q '"comparable": false' && pass "diff --json" || fail "diff --json"

# diff compares the settings in force (format 1.2): a canary differs only in the registration
# path; another setting, or an invalid one (its default was in force), is named
mkdir -p "$T/D" "$T/E"
$FX peermem "$T/D/gdrtrace.job42.node-a.4.rec" --pid 4 --setting GDRTRACE_EVENTS=all
$FX peermem "$T/E/gdrtrace.job42.node-a.5.rec" --pid 5 --setting GDRTRACE_TRANSPORT=ib
out=$($G diff "$T/A" "$T/D" 2>&1); rc=$?
if [ $rc = 1 ] && grep -q 'WARNING' <<<"$out" &&
   grep -q 'setting GDRTRACE_EVENTS: A "control" vs B "all"' <<<"$out" &&
   ! grep -q 'setting GDRTRACE_REG' <<<"$out"; then
    pass "diff names a setting other than the registration path (GDRTRACE_EVENTS)"
else fail "diff A D: exit $rc: $out"; fi
out=$($G diff "$T/A" "$T/E" 2>&1); rc=$?
[ $rc = 1 ] && grep -q 'setting GDRTRACE_TRANSPORT: A "auto" vs B "ib"' <<<"$out" &&
    pass "diff names another GDRTRACE_TRANSPORT" || fail "diff A E: exit $rc: $out"
# a transport setting the job took from NCCL's variables is a confounder too (issue 18)
mkdir -p "$T/H1" "$T/H2"
$FX peermem "$T/H1/gdrtrace.job42.node-a.8.rec" --pid 8 --setting 'GDRTRACE_IB_GID_INDEX=mlx5_0:1=3'
$FX peermem "$T/H2/gdrtrace.job42.node-a.9.rec" --pid 9 --setting 'GDRTRACE_IB_GID_INDEX=mlx5_0:1=0'
out=$($G diff "$T/H1" "$T/H2" 2>&1); rc=$?
[ $rc = 1 ] && grep -q 'setting GDRTRACE_IB_GID_INDEX: A "mlx5_0:1=3" vs B "mlx5_0:1=0"' <<<"$out" &&
    pass "diff names another GID index in force" || fail "diff H1 H2: exit $rc: $out"
out=$($G summary --full "$T/D")
grep -q 'settings GDRTRACE_REG=peermem \[gdrtrace\]  GDRTRACE_ALLOW_PEERMEM=0 \[default\]' <<<"$out" &&
    grep -q 'GDRTRACE_EVENTS=all \[gdrtrace\]' <<<"$out" &&
    pass "summary shows the settings in force with their sources" || fail "summary settings: $out"
$G summary --json "$T/D" | python3 -c '
import json, sys
s = {e["key"]: e for e in json.load(sys.stdin)["processes"][0]["settings"]}
assert s["GDRTRACE_EVENTS"]["value"] == "all" and s["GDRTRACE_EVENTS"]["source"] == "gdrtrace", s
assert s["GDRTRACE_ALLOW_PEERMEM"]["source"] == "default", s
' && pass "summary --json lists the settings" || fail "summary --json settings"
# an invalid value is shown as such, and diff names it even on the registration path
mkdir -p "$T/G"
$FX peermem "$T/G/gdrtrace.job42.node-a.7.rec" --pid 7 --reg peermem --invalid GDRTRACE_REG=peermen
out=$($G summary --full "$T/G")
grep -q 'GDRTRACE_REG=peermem \[invalid: GDRTRACE_REG=peermen\]' <<<"$out" &&
    pass "summary marks an invalid setting and shows what was set" || fail "summary invalid: $out"
out=$($G diff "$T/A" "$T/G" 2>&1); rc=$?
[ $rc = 1 ] && grep -q 'setting GDRTRACE_REG: B has the invalid GDRTRACE_REG=peermen; the default "peermem" was in force' <<<"$out" &&
    pass "diff names an invalid setting" || fail "diff A G: exit $rc: $out"
# a file without the settings section (format 1.1) still diffs by its policy text
mkdir -p "$T/F"
$FX peermem "$T/F/gdrtrace.job42.node-a.6.rec" --pid 6 --no-settings
out=$($G diff "$T/A" "$T/F" 2>&1); rc=$?
[ $rc = 0 ] && ! grep -q WARNING <<<"$out" && pass "diff against a 1.1 recorder (no settings section)" ||
    fail "diff A F: exit $rc: $out"

# export: every sample line is valid exposition syntax; families present
out=$($G export --per-process --exited-within 1000w "$T/job"); rc=$?
bad=$(grep -v '^#' <<<"$out" | grep -Ev '^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? [0-9.e+-]+$' | head -3)
if [ $rc = 0 ] && [ -z "$bad" ] && grep -q '^gdrtrace_registrations_total{host="node-a",gdrtrace_job="job42",rank="0",pid="100",comm="0x1234abcd5678ef00",device="0",asked="dmabuf",method="dmabuf"} 8$' <<<"$out" &&
   grep -q 'gdrtrace_latency_seconds{.*op="reg",quantile="0.99"}' <<<"$out"; then
    pass "export --prometheus: valid lines, registrations and latency quantiles"
else fail "export: exit $rc, bad lines: $bad"; fi
$G export -o "$T/metrics.prom" --exited-within 1000w "$T/job" && grep -q '^# TYPE gdrtrace_fallbacks_total counter' "$T/metrics.prom" &&
    pass "export -o writes the textfile" || fail "export -o"
$G export --json --exited-within 1000w "$T/job" | grep -q '"name": "gdrtrace_verdict"' && pass "export --json" || fail "export --json"

# watch: bounded refreshes, plain output when not a terminal
out=$(timeout 10 $G watch --all --count 2 --interval 0.1 "$T/job" </dev/null); rc=$?
[ $rc = 0 ] && [ "$(grep -c '^gdrtrace watch' <<<"$out")" = 2 ] && [ "$(grep -c '^all ' <<<"$out")" = 2 ] &&
    pass "watch --count 2 refreshes twice and exits" || fail "watch: exit $rc: $out"

# every --json output is valid JSON, also when a recorder holds bytes that are not UTF-8
if command -v python3 >/dev/null; then
    mkdir -p "$T/weird"
    $FX error "$T/weird/gdrtrace.j.w.9.rec" --host $'n\xff\xfe"\\x' --job $'j\x01\xc3\xa9'
    ok=1
    for cmd in "ls --json" "summary --json" "verdict --json" "export --json"; do
        for d in "$T/job" "$T/weird"; do
            # shellcheck disable=SC2086
            $G $cmd "$d" | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null || { ok=0; echo "invalid JSON: $cmd $d"; }
        done
    done
    $G diff --json "$T/A" "$T/weird" | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null || { ok=0; echo "invalid JSON: diff"; }
    [ $ok = 1 ] && pass "every --json output parses as JSON, hostile strings included" || fail "JSON validity"
    bad=$($G export "$T/weird" | grep -v '^#' | grep -Ev '^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? [0-9.e+-]+$' | head -3)
    [ -z "$bad" ] && pass "Prometheus output stays valid with hostile label values" || fail "export hostile: $bad"
else
    echo "note: python3 absent, JSON validity not checked"
fi

# kernel corroboration: a live recorder of this host (its writer holds it) against a bufinfo listing
mkdir -p "$T/live"
coproc HOLD { exec "$FX" dmabuf "$T/live/gdrtrace.j.h.held.rec" --host "$(hostname)" --hold; }
holder=$HOLD_PID   # bash unsets HOLD_PID once the coproc ends
read -r ready <&"${HOLD[0]}"
printf 'Dma-buf Objects:\nsize\tflags\tmode\tcount\texp_name\tino\tname\n%s\n' \
    "00004194304	00000002	00080007	00000003	nv_dmabuf	00000123	" >"$T/bufinfo"
printf '\tAttached Devices:\n\t0000:17:00.0\nTotal 1 devices attached\n\n' >>"$T/bufinfo"
out=$(GDRTRACE_BUFINFO=$T/bufinfo $G summary --no-bars "$T/live")
if grep -q '== kernel corroboration' <<<"$out" && grep -Eq 'NIC mlx5_0 +0000:17:00.0 +nv_dmabuf objects attached: 1' <<<"$out" &&
   grep -q '1 exported by nv_dmabuf' <<<"$out"; then pass "summary: kernel corroboration from bufinfo for a live recorder"
else fail "kernel corroboration: $(sed -n '/== kernel/,$p' <<<"$out")"; fi
# GDRTRACE_BUFINFO naming a FIFO (no writer: an open would wait forever) or
# a device (/dev/zero reads without end): refused, named, nothing read
mkfifo "$T/bufinfo.fifo"
for b in "$T/bufinfo.fifo:a FIFO" "/dev/zero:a device"; do
    out=$(GDRTRACE_BUFINFO=${b%%:*} timeout 20 $G summary --no-bars "$T/live" 2>&1); rc=$?
    [ $rc != 124 ] && grep -q "not readable: ${b#*:}, not a regular file: refused" <<<"$out" &&
        pass "GDRTRACE_BUFINFO=${b%%:*}: ${b#*:} refused, said (exit $rc)" ||
        fail "GDRTRACE_BUFINFO=${b%%:*}: exit $rc: $(grep -A1 'kernel corroboration' <<<"$out" | tail -1)"
done
exec {HOLD[1]}>&-
wait "$holder"
GDRTRACE_BUFINFO=$T/bufinfo $G summary --no-bars "$T/job" | grep -q 'kernel corroboration' &&
    fail "kernel corroboration shown for exited recorders" || pass "no kernel corroboration for exited recorders"

# hostile file through the command
head -c 3000 "$T/dmabuf/gdrtrace.job42.node-a.4242.rec" >"$T/trunc.rec"
out=$($G summary "$T/trunc.rec" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "trunc.rec: truncated" <<<"$out"; then pass "truncated file: message naming it, exit 2"
else fail "truncated file: exit $rc: $out"; fi
printf 'not a recorder at all' >"$T/junk.rec"
out=$($G verdict "$T/junk.rec" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "junk.rec: not a gdrtrace recorder" <<<"$out" && pass "junk file refused with exit 2" ||
    fail "junk: exit $rc: $out"

for c in ls summary verdict dump diff report watch export prune; do
    if $G "$c" --help 2>/dev/null | grep -q "usage: gdrtrace $c"; then pass "$c --help"
    else
        if $G "$c" --help 2>&1 | grep -q "not built"; then fail "$c not built"; else fail "$c --help"; fi
    fi
done

finish "all gdrtrace command checks passed"
