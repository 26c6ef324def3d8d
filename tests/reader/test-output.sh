#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-output.sh — where `gdrtrace dump -o` and `export -o` may write
# (tools/lib/outfile.c):
#  * dump: a new archive is created 0600 (whatever the umask); an existing
#    regular file is kept (exit 1, a message naming it and --force) unless
#    --force, which replaces it; a FIFO, a symbolic link to /dev/null, a
#    folder and (as root) a character device node are refused even with
#    --force and left as they were; no temporary file is left behind;
#  * export -o: replaces a regular file atomically (the old inode is not
#    written into: a hard link to it keeps the old text); a FIFO and a
#    symbolic link are refused and left alone; no temporary file is left;
#  * dump --level: a strict integer in 1..22 (`3x`, `0`, `99`, `` refused
#    with a usage error naming the value); watch --count and --interval
#    refuse `2x`, `0`, `1s`, `abc` the same way.
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/job"
$FX dmabuf "$T/job/gdrtrace.job42.node-a.4242.rec" || { echo "FAIL fixture"; exit 1; }
mode() { stat -c %a "$1"; }
no_tmp() { ! ls "$T"/out 2>/dev/null | grep -q '\.tmp\.'; }
mkdir -p "$T/out"

# dump: new archive 0600 whatever the umask
(umask 022; $G dump -o "$T/out/a.zst" "$T/job" >/dev/null) && [ "$(mode "$T/out/a.zst")" = 600 ] &&
    pass "dump creates the archive 0600 (umask 022)" || fail "dump archive mode $(mode "$T/out/a.zst" 2>&1)"
$G summary --full "$T/out/a.zst" | grep -q 'regMrDmaBuf' && pass "the archive reads back" || fail "archive unreadable"

# dump: an existing regular file is not replaced without --force
echo precious >"$T/out/keep"
out=$($G dump -o "$T/out/keep" "$T/job" 2>&1); rc=$?
[ $rc = 1 ] && [ "$(cat "$T/out/keep")" = precious ] && grep -q "keep: exists.*--force" <<<"$out" && no_tmp &&
    pass "dump refuses an existing file without --force (exit 1, names it)" || fail "dump over a file: exit $rc: $out"
$G dump --force -o "$T/out/keep" "$T/job" >/dev/null; rc=$?
[ $rc = 0 ] && $G ls "$T/out/keep" | grep -q node-a && [ "$(mode "$T/out/keep")" = 600 ] &&
    pass "dump --force replaces an existing regular file" || fail "dump --force: exit $rc"

# non-regular targets: refused even with --force, left as they are
mkfifo "$T/out/fifo"
ln -s /dev/null "$T/out/devnull"
mkdir "$T/out/dir"
targets="fifo devnull dir"
# as root, a real character device (what `-o /dev/null` hit), where mknod is allowed
mknod "$T/out/null" c 1 3 2>/dev/null && targets="$targets null"
for t in $targets; do
    for force in "" --force; do
        out=$(timeout 10 $G dump $force -o "$T/out/$t" "$T/job" 2>&1); rc=$?
        if [ $rc = 1 ] && grep -q "$t: is a .*not a regular file; refusing" <<<"$out" && no_tmp; then
            pass "dump ${force:+$force }-o $t refused: $(sed 's/.*: is //' <<<"$out")"
        else
            fail "dump $force -o $t: exit $rc: $out"
        fi
    done
done
[ -p "$T/out/fifo" ] && [ -L "$T/out/devnull" ] && [ -d "$T/out/dir" ] && [ -c /dev/null ] &&
    { [ ! -e "$T/out/null" ] || [ -c "$T/out/null" ]; } &&
    pass "the FIFO, the link and the folder are untouched" || fail "a refused target was changed"

# export -o: atomic replacement of a regular file, never through a FIFO or a link
echo old >"$T/out/metrics.prom"
ln "$T/out/metrics.prom" "$T/out/old-inode"
$G export -o "$T/out/metrics.prom" "$T/job"; rc=$?
[ $rc = 0 ] && grep -q '^# TYPE gdrtrace_verdict' "$T/out/metrics.prom" && [ "$(cat "$T/out/old-inode")" = old ] &&
    no_tmp && pass "export -o replaces a regular file by rename (the old inode is not written)" ||
    fail "export -o regular: exit $rc"
for t in fifo devnull; do
    out=$(timeout 10 $G export -o "$T/out/$t" "$T/job" 2>&1); rc=$?
    [ $rc = 1 ] && grep -q "$t: is a .*not a regular file; refusing" <<<"$out" && no_tmp &&
        pass "export -o $t refused" || fail "export -o $t: exit $rc: $out"
done
[ -p "$T/out/fifo" ] && [ -L "$T/out/devnull" ] && pass "export left the FIFO and the link alone" ||
    fail "export changed a refused target"

# dump --level: strict integer with a range
for bad in 3x 0 99 "" -1 " 5" 0x3; do
    out=$($G dump --level "$bad" -o "$T/out/l.zst" "$T/job" 2>&1); rc=$?
    [ $rc = 64 ] && grep -q -- "--level '$bad' is not an integer in 1\.\.22" <<<"$out" && [ ! -e "$T/out/l.zst" ] &&
        pass "dump --level '$bad' refused (exit 64)" || fail "dump --level '$bad': exit $rc: $out"
done
$G dump --level 010 -o "$T/out/l.zst" "$T/job" >/dev/null && pass "dump --level 010 is ten, accepted" ||
    fail "dump --level 010"

# watch --count / --interval: strict numbers too (atol/atof took "2x" as 2)
for args in "--count 2x" "--count 0" "--count ''" "--interval 1s" "--interval abc" "--interval 0"; do
    out=$(eval timeout 10 $G watch --all $args "$T/job" </dev/null 2>&1); rc=$?
    [ $rc = 64 ] && grep -q "gdrtrace watch: --" <<<"$out" && pass "watch $args refused (exit 64)" ||
        fail "watch $args: exit $rc: $(head -2 <<<"$out")"
done

finish "all output-path checks passed"
