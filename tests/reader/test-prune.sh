#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-prune.sh — `gdrtrace prune` on a folder holding every kind of entry:
#  * a live recorder (its pid is a running process) is kept, and so is a
#    closed one whose pid still runs (the writer reopens it);
#  * exited and crashed recorders are removed, a line each with the reason,
#    and a summary line;
#  * a crashed-looking recorder that a process still holds open for writing
#    is kept, and so is one whose liveness is unknown (a writer in another
#    pid namespace);
#  * --dry-run removes nothing; --job and --older-than filter;
#  * a file that is not a recorder, a symlink (and its target), a FIFO, an
#    archive and unrelated files are left alone; a bad DURATION is refused
#    with exit 64 naming the value; an entry that is not a recorder is
#    named, and exit 0 for the rest (it made every epilog's prune exit 2);
#  * as root: another user's recorder is removed by root, kept by that
#    user's neighbour (run through setpriv), and kept with exit 1 by a root
#    without CAP_LEASE (no way to check that nobody still writes it);
#  * the real writer: the harness's recorders are kept while it runs and
#    removed once its processes are killed (skipped without the harness).
set -u
BUILD=${BUILD:-build/default}
G=$BUILD/gdrtrace
FX=$BUILD/tests/reader_fixture
H=$BUILD/harness/harness
T=$(mktemp -d)
HARNESS=
HOLD_PIDS=()
HOLD_FDS=()
cleanup() {
    for fd in "${HOLD_FDS[@]}"; do exec {fd}>&-; done # each --hold writer exits
    for p in "${HOLD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    [ -n "$HARNESS" ] && kill "$HARNESS" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
export GDRTRACE_DIR=$T/unused
# hold PATH: a running writer holding a LIVE recorder at PATH (the fixture's
# --hold: created now, open and mapped, until the test ends); sets HELD
hold() {
    local in=$T/hold.${#HOLD_PIDS[@]} fd
    mkfifo "$in"
    $FX dmabuf "$1" --hold "${@:2}" <"$in" >"$in.out" &
    HELD=$!
    HOLD_PIDS+=("$HELD")
    exec {fd}>"$in"
    HOLD_FDS+=("$fd")
    for _ in $(seq 200); do grep -q ready "$in.out" 2>/dev/null && return 0; sleep 0.05; done
    echo "FAIL: the --hold writer of $1 never got ready"; return 1
}
# hold_closed PATH: a closed recorder whose writer still runs and holds it
# (read-only here, so only the judgement, not the lease, can keep it); sets HELD
hold_closed() {
    : >"$1"
    (exec 3<"$1"; exec sleep 600) &
    HELD=$!
    HOLD_PIDS+=("$HELD")
    for _ in $(seq 200); do [ -e "/proc/$HELD/fd/3" ] && break; sleep 0.05; done
    $FX dmabuf "$1" --pid "$HELD" --start-mono now # rewritten in place: the same inode
}
# pids that do not run
gone() { # a pid that is not running now
    local p=$((4000000 + RANDOM))
    while kill -0 "$p" 2>/dev/null; do p=$((p + 1)); done
    echo "$p"
}
P1=$(gone); P2=$((P1 + 1)); P3=$((P1 + 2)); P4=$((P1 + 3)); P5=$((P1 + 4))

fill() { # the standard folder
    local d=$1
    rm -rf "$d"; mkdir -p "$d"
    hold "$d/gdrtrace.job42.node-a.live.rec"; LIVE=$HELD
    hold_closed "$d/gdrtrace.job42.node-a.closed.rec"; CLOSED=$HELD
    $FX dmabuf "$d/gdrtrace.job42.node-a.$P1.rec" --pid "$P1"               # exited
    $FX host "$d/gdrtrace.job42.node-a.$P2.rec" --pid "$P2" --state live    # crashed
    $FX error "$d/gdrtrace.job7.node-a.$P3.rec" --job job7 --pid "$P3" --age 600  # exited 10 min ago
    printf 'not a recorder' >"$d/gdrtrace.junk.rec"
    printf 'keep me' >"$d/notes.txt"
    ln -s "$d/notes.txt" "$d/gdrtrace.link.rec"
    mkfifo "$d/gdrtrace.fifo.rec"
    $G dump -o "$d/old.zst" "$d/gdrtrace.job42.node-a.$P1.rec" >/dev/null
}
left() { ls -A "$1" | sort | tr '\n' ' '; }

# --dry-run
D=$T/d; fill "$D"
before=$(left "$D")
out=$($G prune --dry-run "$D"); rc=$?
if [ "$(left "$D")" = "$before" ] && [ "$(grep -c '^would-remove' <<<"$out")" = 3 ] &&
   grep -q 'would be removed .*dry run: nothing removed' <<<"$out" && [ $rc = 0 ]; then
    pass "--dry-run: 3 would be removed, nothing removed, exit 0 (the junk entry named)"
else fail "--dry-run: exit $rc, left $(left "$D"), output: $out"; fi

# the real run
out=$($G prune "$D"); rc=$?
chk() { # $1 = description, $2 = regex on the output
    grep -Eq "$2" <<<"$out" && pass "$1" || fail "$1: no line /$2/ in: $out"
}
chk "live recorder kept (a running writer holds it)" "^kept +live +$D/gdrtrace.job42.node-a.live.rec +pid $LIVE runs and holds it$"
chk "closed recorder whose writer still runs kept" "^kept +exited +$D/gdrtrace.job42.node-a.closed.rec +closed, but pid $CLOSED still holds it"
chk "exited recorder removed" "^removed +exited +$D/gdrtrace.job42.node-a.$P1.rec +closed cleanly, its writer \\(pid $P1\\) no longer holds it"
chk "crashed recorder removed" "^removed +crashed +$D/gdrtrace.job42.node-a.$P2.rec +never closed, its writer \\(pid $P2\\) is gone"
chk "a file that is not a recorder kept with the parser's reason" "^kept +not-recorder +$D/gdrtrace.junk.rec +not a gdrtrace recorder"
chk "symlink kept, not followed" "^kept +symlink +$D/gdrtrace.link.rec"
chk "FIFO kept" "^kept +not-regular +$D/gdrtrace.fifo.rec"
chk "summary line" "^prune $D: 3 removed \\(0\\.[0-9] MB\\), 5 kept \\(1 unreadable\\), 0 failed$"
[ $rc = 0 ] && pass "exit 0: an entry named like a recorder that is not one is named, not a failure" ||
    fail "exit $rc, want 0"
want="gdrtrace.fifo.rec gdrtrace.job42.node-a.closed.rec gdrtrace.job42.node-a.live.rec gdrtrace.junk.rec gdrtrace.link.rec notes.txt old.zst "
[ "$(left "$D")" = "$want" ] && pass "exactly the exited and crashed recorders are gone" ||
    fail "left: $(left "$D"), want: $want"
[ "$(cat "$D/notes.txt")" = "keep me" ] && [ -L "$D/gdrtrace.link.rec" ] &&
    pass "symlink target untouched" || fail "symlink or its target changed"
grep -Eq "^(removed|kept) .*(notes.txt|old.zst)" <<<"$out" && fail "prune looked at non-recorder names" ||
    pass "archives and other names are not even looked at"
rm -f "$D/gdrtrace.junk.rec"
$G prune "$D" >/dev/null; rc=$?
[ $rc = 0 ] && pass "exit 0 when every entry is a recorder" || fail "exit $rc, want 0"

# --job
fill "$D"; rm -f "$D/gdrtrace.junk.rec"
out=$($G prune --job job7 "$D"); rc=$?
if [ $rc = 0 ] && [ ! -e "$D/gdrtrace.job7.node-a.$P3.rec" ] && [ -e "$D/gdrtrace.job42.node-a.$P1.rec" ] &&
   [ -e "$D/gdrtrace.job42.node-a.$P2.rec" ] && grep -Eq "^kept +exited .*$P1.rec +job 'job42', not 'job7'" <<<"$out"; then
    pass "--job job7 removes only job7's recorders, says why the others are kept"
else fail "--job: exit $rc, left $(left "$D"): $out"; fi

# --older-than: job7's recorder closed 10 minutes ago, the others a year ago
fill "$D"; rm -f "$D/gdrtrace.junk.rec"
out=$($G prune --older-than 1h "$D"); rc=$?
if [ $rc = 0 ] && [ -e "$D/gdrtrace.job7.node-a.$P3.rec" ] && [ ! -e "$D/gdrtrace.job42.node-a.$P1.rec" ] &&
   [ ! -e "$D/gdrtrace.job42.node-a.$P2.rec" ] &&
   grep -Eq "^kept +exited .*$P3.rec +last activity 10m ago, not older than 1h" <<<"$out"; then
    pass "--older-than 1h keeps the recorder closed 10 minutes ago, removes the year-old ones"
else fail "--older-than 1h: exit $rc, left $(left "$D"): $out"; fi
out=$($G prune --older-than 5m "$D")
[ ! -e "$D/gdrtrace.job7.node-a.$P3.rec" ] && pass "--older-than 5m removes it" || fail "--older-than 5m: $out"

# bad durations
for bad in 12x 12 1.5h -5m 5M "" 5mm 99999999999999999999s " 5m"; do
    err=$($G prune --older-than "$bad" "$D" 2>&1 >/dev/null); rc=$?
    if [ $rc = 64 ] && grep -Fq -- "--older-than '$bad' is not a duration" <<<"$err"; then :
    else fail "--older-than '$bad': exit $rc: $err"; bad=FAILED; break; fi
done
[ "$bad" != FAILED ] && pass "bad DURATIONs refused with exit 64, the message naming the value"

# usage and unreadable folder
$G prune "$D" "$D" >/dev/null 2>&1; rc=$?
[ $rc = 64 ] && pass "two folders: usage error" || fail "two folders: exit $rc"
err=$($G prune "$T/nope" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "$T/nope: cannot read folder" <<<"$err" && pass "missing folder: exit 2 naming it" ||
    fail "missing folder: exit $rc: $err"
$G prune --help | grep -q '^usage: gdrtrace prune' && pass "prune --help" || fail "prune --help"
GDRTRACE_DIR=$D $G prune --dry-run | grep -q "^prune $D:" && pass "default folder is \$GDRTRACE_DIR" ||
    fail "GDRTRACE_DIR not used"

# held open for writing: judged crashed (its pid does not run here) but kept
fill "$D"
exec 9<>"$D/gdrtrace.job42.node-a.$P2.rec"
out=$($G prune "$D")
exec 9>&-
[ -e "$D/gdrtrace.job42.node-a.$P2.rec" ] && grep -Eq "^kept +crashed .*$P2.rec .*open for writing" <<<"$out" &&
    pass "a recorder still open for writing is kept although its pid looks gone" ||
    fail "open for writing: $out"

# a LIVE recorder naming a running process that does not hold it (the writer
# is in another pid namespace, or the pid was taken by someone else): unknown, kept
U=$T/unknown; mkdir -p "$U"
sleep 600 &
HOLD_PIDS+=($!)
$FX dmabuf "$U/gdrtrace.job42.node-a.x.rec" --pid $! --state live --start-mono now
out=$($G prune "$U"); rc=$?
[ $rc = 0 ] && [ -e "$U/gdrtrace.job42.node-a.x.rec" ] && grep -Eq "^kept +unknown .*cannot tell whether pid $! is its writer" <<<"$out" &&
    pass "liveness unknown (pid runs, not seen holding it): kept" || fail "unknown: exit $rc: $out"
# a recorder whose writer died in another pid namespace: unknown for ever,
# so only --older-than takes it, and only when nobody holds it open for writing
U=$T/otherns; mkdir -p "$U"
$FX dmabuf "$U/gdrtrace.job42.node-a.ns.rec" --pid 4242 --state live --pidns 1:2 --start-mono 1
out=$($G prune "$U"); rc=$?
[ $rc = 0 ] && [ -e "$U/gdrtrace.job42.node-a.ns.rec" ] && grep -Eq "^kept +unknown .*another pid namespace" <<<"$out" &&
    pass "other pid namespace, no --older-than: kept" || fail "other pid namespace: exit $rc: $out"
out=$($G prune --older-than 1h "$U"); rc=$?
[ $rc = 0 ] && [ ! -e "$U/gdrtrace.job42.node-a.ns.rec" ] &&
    grep -Eq "^removed +unknown +$U/gdrtrace.job42.node-a.ns.rec +unknown writer" <<<"$out" &&
    pass "--older-than: an old recorder of another pid namespace, held by no writer, removed" ||
    fail "other pid namespace, --older-than: exit $rc: $out"
$FX dmabuf "$U/gdrtrace.job42.node-a.ns2.rec" --pid 4242 --state live --pidns 1:2 --start-mono 1
exec 8<>"$U/gdrtrace.job42.node-a.ns2.rec"
out=$($G prune --older-than 1h "$U"); rc=$?
exec 8>&-
[ -e "$U/gdrtrace.job42.node-a.ns2.rec" ] && grep -Eq "^kept +unknown +$U/gdrtrace.job42.node-a.ns2.rec" <<<"$out" &&
    pass "--older-than: one of another pid namespace still open for writing is kept" ||
    fail "other pid namespace held open: exit $rc: $out"

# a hostile file name and job reach the terminal escaped
Hn=$T/hostile; mkdir -p "$Hn"
$FX dmabuf "$Hn/gdrtrace.j.n."$'\e[2J'".rec" --pid "$P4" --job $'j\e[31m\nforged'
out=$($G prune --dry-run "$Hn")
if ! grep -q $'\e' <<<"$out" && grep -Fq 'gdrtrace.j.n.\e[2J.rec' <<<"$out" && grep -Fq "job 'j\e[31m\nforged'" <<<"$out"; then
    pass "file name and job printed escaped (no raw ESC or newline from the folder)"
else fail "escaping: $(cat -A <<<"$out")"; fi

# --json
if command -v python3 >/dev/null; then
    fill "$D"
    $G prune --dry-run --json "$D" | python3 -c '
import json, sys
d = json.load(sys.stdin)
acts = sorted(f["action"] for f in d["files"])
assert d["dry_run"] is True and d["would_remove"] == 3 and d["exit"] == 0, d
assert acts.count("would-remove") == 3 and acts.count("kept") == 5, acts
' && pass "--json: files with action/state/reason, counts, exit" || fail "--json"
fi

# ownership
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    O=$T/own; rm -rf "$O"; mkdir -p "$O"; chmod 1777 "$O"; chmod 711 "$T"
    $FX dmabuf "$O/gdrtrace.j.n.$P4.rec" --pid "$P4"; chown 65534:65534 "$O/gdrtrace.j.n.$P4.rec"
    $FX dmabuf "$O/gdrtrace.j.n.$P5.rec" --pid "$P5"; chown 65533:65533 "$O/gdrtrace.j.n.$P5.rec"
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $G prune "$O" 2>&1); rc=$?
    if [ $rc = 0 ] && [ ! -e "$O/gdrtrace.j.n.$P4.rec" ] && [ -e "$O/gdrtrace.j.n.$P5.rec" ] &&
       grep -Eq "^kept +not-yours .*$P5.rec +owned by uid 65533, not by you \\(uid 65534\\)" <<<"$out"; then
        pass "a user prunes only their own recorders, in a folder where they could remove others'"
    else fail "non-root prune: exit $rc, left $(left "$O"): $out"; fi
    # root without CAP_LEASE cannot check another user's file for writers: kept, exit 1
    out=$(setpriv --bounding-set=-lease $G prune "$O" 2>&1); rc=$?
    if [ $rc = 1 ] && [ -e "$O/gdrtrace.j.n.$P5.rec" ] &&
       grep -Eq "^failed +exited .*$P5.rec +judged exited, left in place: cannot check .*CAP_LEASE" <<<"$out"; then
        pass "no lease possible (root without CAP_LEASE): left in place, reported failed, exit 1"
    else fail "without CAP_LEASE: exit $rc: $out"; fi
    $G prune "$O" >/dev/null && [ ! -e "$O/gdrtrace.j.n.$P5.rec" ] && pass "root prunes any user's recorder" ||
        fail "root did not prune uid 65533's recorder"
else
    echo "note: not root (or no setpriv): the other-user case is not checked"
fi

# the real writer, through the NCCL-like harness
if [ -x "$H" ]; then
    R=$T/real; mkdir -p "$R"
    "$H" --abi 12 --data-only --iters 1000000 --max-size 64K --timeout 60 --dir "$R" \
        --plugin "$BUILD/libnccl-net-gdrtrace.so" >"$T/harness.out" 2>&1 &
    HARNESS=$!
    for _ in $(seq 100); do
        [ "$($G ls "$R" 2>/dev/null | grep -c ' live ')" = 2 ] && break
        sleep 0.1
    done
    out=$($G prune "$R")
    if [ "$(grep -Ec '^kept +live ' <<<"$out")" = 2 ] && [ "$(ls "$R" | grep -c '\.rec$')" = 2 ]; then
        pass "real writer: both harness processes' recorders kept while they run"
    else fail "real writer while running: $out ($(cat "$T/harness.out" | tail -3))"; fi
    pids=$(ls "$R" | sed -n 's/^gdrtrace\..*\.\([0-9]*\)\.rec$/\1/p')
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    kill -9 "$HARNESS" 2>/dev/null; wait "$HARNESS" 2>/dev/null; HARNESS=
    for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.05; done; done
    out=$($G prune "$R"); rc=$?
    if [ $rc = 0 ] && [ "$(grep -Ec '^removed +(crashed|exited) ' <<<"$out")" = 2 ] && [ -z "$(ls "$R")" ]; then
        pass "real writer: both recorders removed once the processes are killed"
    else fail "real writer after kill: exit $rc: $out"; fi
else
    echo "note: $H not built: the real-writer case is not checked"
fi

[ $fails = 0 ] && echo "all prune checks passed" || echo "$fails check(s) failed"
[ $fails = 0 ]
