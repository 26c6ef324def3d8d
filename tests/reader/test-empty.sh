#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-empty.sh — nothing found is never silent (issue 19, point 4):
#  * an empty folder, a --job that matches nothing, a folder of archives under
#    a name that is not scanned: every subcommand says where it looked, the job
#    filter, what it skipped and why, and the likely causes (NET/Plugin first);
#  * summary and verdict agree on the exit code of an empty input (15);
#  * an explicitly named file is classified by its content, not its name;
#  * a process present live and inside an archive in one folder counts once;
#  * `--job -` selects the recorders written without a job id.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/none"
for c in ls summary verdict; do
    err=$($G $c "$T/none" 2>&1 >/dev/null)
    if grep -q "read folder $T/none" <<<"$err" && grep -q "NET/Plugin" <<<"$err" &&
       grep -q "GDRTRACE_DIR" <<<"$err" && grep -q "pruned" <<<"$err" &&
       grep -q "job filter: none" <<<"$err"; then
        pass "$c on an empty folder names it and the likely causes"
    else
        fail "$c on an empty folder: $err"
    fi
done
$G summary "$T/none" >/dev/null 2>&1; s=$?
$G verdict "$T/none" >/dev/null 2>&1; v=$?
[ $s = 15 ] && [ $v = 15 ] && pass "summary and verdict exit 15 on an empty folder" ||
    fail "empty folder: summary exit $s, verdict exit $v (want 15 both)"

mkdir -p "$T/j"
$FX dmabuf "$T/j/gdrtrace.job42.node-a.4242.rec" --job job42 >/dev/null || fail "fixture job42"
for c in ls summary verdict; do
    err=$($G $c --job job7 "$T/j" 2>&1 >/dev/null)
    if grep -q "job filter: job7" <<<"$err" && grep -q "skipped 1 recorder(s) of another job (e.g. --job job42)" <<<"$err"; then
        pass "$c --job with no match names the filter and the job it skipped"
    else
        fail "$c --job job7: $err"
    fi
done
$G summary --job job7 "$T/j" >/dev/null 2>&1; s=$?
[ $s = 15 ] && pass "summary --job without a match: exit 15" || fail "summary --job job7: exit $s"

# archives under a name the folder scan does not take
$G dump -o "$T/a.zst" "$T/j" >/dev/null 2>&1 || fail "dump"
mkdir -p "$T/gtz"; cp "$T/a.zst" "$T/gtz/node-a.gtz"
err=$($G verdict "$T/gtz" 2>&1 >/dev/null)
grep -q "skipped 1 file(s) not named gdrtrace.\*.rec or \*.zst (e.g. node-a.gtz)" <<<"$err" &&
    pass "a folder of .gtz archives says it skipped them by name" || fail ".gtz folder: $err"
grep -q "1 of them hold a recorder or a zstd archive by their content (e.g. node-a.gtz)" <<<"$err" &&
    pass "... and that they hold an archive, to be named or renamed" || fail ".gtz content hint: $err"
mkdir -p "$T/notours"; echo "not a recorder" > "$T/notours/notes.txt"; mkfifo "$T/notours/fifo"
err=$($G verdict "$T/notours" 2>&1 >/dev/null)
grep -q "skipped 2 file(s) not named" <<<"$err" && ! grep -q "hold a recorder" <<<"$err" &&
    pass "other files (a text, a FIFO) are skipped without the archive hint, never blocking" ||
    fail "not-ours folder: $err"
# named explicitly, the same file is read for what it is
out=$($G verdict "$T/gtz/node-a.gtz" 2>&1); rc=$?
[ $rc = 0 ] && grep -q DIRECT-DMABUF <<<"$out" && pass "an archive named .gtz given by path is read" ||
    fail ".gtz by path: exit $rc: $out"
cp "$T/j/gdrtrace.job42.node-a.4242.rec" "$T/rec.zst"
out=$($G verdict "$T/rec.zst" 2>&1); rc=$?
[ $rc = 0 ] && pass "a recorder named .zst given by path is read as a recorder" || fail "rec.zst: exit $rc: $out"

# live + archived copy of one process in one folder: counted once
mkdir -p "$T/both"; cp "$T/j/gdrtrace.job42.node-a.4242.rec" "$T/both/"; cp "$T/a.zst" "$T/both/a.zst"
n=$($G ls "$T/both" | grep -c " 4242 ")
[ "$n" = 1 ] && pass "ls: live + archived copy of a process lists it once" || fail "ls both: $n lines"
v=$($G verdict "$T/both")
grep -q "^all .* 1 process(es)" <<<"$v" && pass "verdict: live + archived copy counted once" ||
    fail "verdict both: $v"
row=$($G summary --full --no-bars "$T/both" | grep -A1 "^   host .*procs" | tail -1)
[ "$(awk '{print $2, $4}' <<<"$row")" = "1 8" ] &&
    pass "summary: live + archived copy counted once (1 process, 8 DMA-BUF registrations)" ||
    fail "summary both: $row"
# the live copy is the one kept (its source is the .rec file)
src=$($G ls --json "$T/both" | grep '"source"')
[ "$(grep -c . <<<"$src")" = 1 ] && grep -q 'gdrtrace.job42.node-a.4242.rec"' <<<"$src" &&
    pass "the live copy is the one kept" || fail "kept copy: $src"

# --job - selects recorders without a job id
mkdir -p "$T/nojob"
$FX dmabuf "$T/nojob/gdrtrace.node-a.77.rec" --job "" --pid 77 >/dev/null || fail "fixture no job"
$FX dmabuf "$T/nojob/gdrtrace.job42.node-a.78.rec" --job job42 --pid 78 >/dev/null || fail "fixture job42"
out=$($G ls --job - "$T/nojob")
grep -q " 77 " <<<"$out" && ! grep -q " 78 " <<<"$out" && pass "--job - selects the recorders without a job id" ||
    fail "--job -: $out"
finish "empty inputs: all checks passed"
