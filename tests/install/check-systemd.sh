#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-systemd.sh — the shipped gdrtrace-export.service and .timer
# (dist/systemd/, installed by dist/module.mk and the .deb):
#  * the service exports with -o into the folder it may write
#    (ReadWritePaths) and is skipped without (ConditionPathIsDirectory);
#  * `make install` writes both, mode 0644, ExecStart naming $(BINDIR)'s
#    gdrtrace; `make uninstall` removes them;
#  * its command, run as written (binary and folder swapped for this
#    build's and a scratch one), leaves the metrics file and says nothing
#    on an idle node (no journal entry every 30 s);
#  * `systemd-analyze verify` has nothing to say about either unit, and the
#    timer's calendar fires every 30 s.
# tests/reader/test-prometheus-live.sh feeds a real node_exporter with the
# same command.  Skips (77) without systemd-analyze, after the other checks.
set -u
BUILD=${BUILD:-build/default}
S=dist/systemd/gdrtrace-export.service.in
TM=dist/systemd/gdrtrace-export.timer
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
key() { sed -n "s/^$1=//p" "$2"; }

cmd=$(key ExecStart $S)
dir=$(key ReadWritePaths $S)
out=$(sed -n 's/.* -o \([^ ]*\).*/\1/p' <<<"$cmd")
[[ "$cmd" == "@BINDIR@/gdrtrace export --prometheus "* ]] && [ -n "$dir" ] && [ "$out" = "$dir/gdrtrace.prom" ] &&
    [ "$(key ConditionPathIsDirectory $S)" = "$dir" ] &&
    pass "service: export -o $out, into ReadWritePaths, skipped without $dir" ||
    fail "service: ExecStart '$cmd', ReadWritePaths '$dir', Condition '$(key ConditionPathIsDirectory $S)'"

st=$tmp/stage
san=${BUILD#build/}
[ "$san" = default ] && san=
make --no-print-directory install SAN="$san" BUILD="$BUILD" DESTDIR="$st" PREFIX=/usr >"$tmp/i.log" 2>&1 ||
    { cat "$tmp/i.log"; echo "FAIL: make install"; exit 1; }
u=$st/usr/lib/systemd/system
modes=$(stat -c %a "$u/gdrtrace-export.service" "$u/gdrtrace-export.timer" 2>/dev/null | tr '\n' ' ')
[ "$modes" = "644 644 " ] && [ "$(key ExecStart "$u/gdrtrace-export.service")" = "/usr/bin/${cmd#@BINDIR@/}" ] &&
    cmp -s $TM "$u/gdrtrace-export.timer" && pass "make install: both units in lib/systemd/system, ExecStart=/usr/bin/gdrtrace ..." ||
    fail "make install: modes '$modes', ExecStart '$(key ExecStart "$u/gdrtrace-export.service")'"
make --no-print-directory uninstall SAN="$san" BUILD="$BUILD" DESTDIR="$st" PREFIX=/usr >/dev/null 2>&1
[ -z "$(ls -A "$u" 2>&1)" ] && pass "make uninstall removes them" || fail "make uninstall left: $(ls -A "$u")"

# The command as written: this build's gdrtrace, a scratch folder, no recorder.
bin=$(cd "$BUILD" && pwd)
mkdir -p "$tmp/textfile" "$tmp/idle"
run=${cmd//@BINDIR@/$bin}
run=${run//$dir/$tmp/textfile}
GDRTRACE_DIR=$tmp/idle $run >"$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/o" ] && grep -q '^# TYPE gdrtrace_job_verdict gauge$' "$tmp/textfile/gdrtrace.prom" &&
    [ "$(ls -A "$tmp/textfile")" = gdrtrace.prom ] &&
    pass "its command on an idle node: gdrtrace.prom written, nothing printed, exit 0" ||
    fail "its command on an idle node: exit $rc, printed: $(head -3 "$tmp/o")"

if ! command -v systemd-analyze >/dev/null; then
    [ $fails = 0 ] || exit 1
    echo "skip: systemd-analyze not installed (package systemd): the units were not verified"
    exit 77
fi
# verify checks that ExecStart's binary exists: point it at this build's.
sed "s|@BINDIR@|$bin|g" $S >"$tmp/gdrtrace-export.service"
cp $TM "$tmp/"
v=$(systemd-analyze verify --man=no "$tmp/gdrtrace-export.service" "$tmp/gdrtrace-export.timer" 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$v" ] && pass "systemd-analyze verify: both units clean" ||
    fail "systemd-analyze verify: exit $rc: $v"
cal=$(systemd-analyze calendar --iterations=3 "$(key OnCalendar $TM)" 2>&1)
mapfile -t ts < <(sed -n 's/^ *\(Next elapse\|Iter\. #[0-9]*\): //p' <<<"$cal" | while read -r t; do date -d "$t" +%s; done)
[ ${#ts[@]} = 3 ] && [ $((ts[1] - ts[0])) = 30 ] && [ $((ts[2] - ts[1])) = 30 ] && [ "$(key AccuracySec $TM)" = 1s ] &&
    pass "timer: every 30 s (OnCalendar=$(key OnCalendar $TM), AccuracySec=1s)" || fail "timer calendar: $cal"
[ $fails = 0 ] && echo "systemd units: ok"
[ $fails = 0 ]
