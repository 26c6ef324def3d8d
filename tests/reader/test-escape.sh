#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-escape.sh — what the reader prints as text cannot drive the terminal
# or forge lines (tools/lib/esc.c), and its reader-side variables are strict:
#  * a recorder whose host, job and device strings carry an escape sequence
#    (ESC [2J), a carriage return, a newline followed by a forged line, a C1
#    control (CSI, U+009B) and a bidi override (U+202E): `ls`, `summary`,
#    `verdict`, `diff`, `watch` print no control byte, no C1, no override,
#    no forged line — the escapes appear spelled out (\e[2J, \n, \u{009b});
#    ordinary UTF-8 (é) is kept; `--json` still carries the raw bytes, escaped
#    as JSON;
#  * a file name with an escape sequence in an error message is escaped too;
#  * GDRTRACE_ARCHIVE_MAX: -1, 0, 4G, 010x and above 16 GiB give one WARN
#    naming the variable and use the 4 GiB default; a small valid value is
#    enforced (an archive larger than it is refused).
. "$(dirname "$0")/lib.sh"
mkdir -p "$T/bad" "$T/good"

esc=$'\e'
host="n${esc}[2Jx"$'\r'"y"$'\n'"FORGED line"
job=$'j\xc2\x9bz\xe2\x80\xaeevil\xc3\xa9'
$FX error "$T/bad/gdrtrace.j.h.7.rec" --host "$host" --job "$job" || { echo "FAIL fixture"; exit 1; }
$FX error "$T/bad/gdrtrace.j.h.6.rec" --host node-b --pid 6 || { echo "FAIL fixture"; exit 1; }
$FX dmabuf "$T/good/gdrtrace.j.h.8.rec" || { echo "FAIL fixture"; exit 1; }

# no byte a terminal acts on: C0 except newline and tab, DEL, C1 (as UTF-8), bidi overrides
clean() {
    LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$1" && return 1
    LC_ALL=C grep -q $'\xc2[\x80-\x9f]' "$1" && return 1
    LC_ALL=C grep -q $'\xe2\x80[\xaa-\xae]' "$1" && return 1
    LC_ALL=C grep -q '^FORGED' "$1" && return 1
    return 0
}
check() { # name, file
    if clean "$2" && grep -qF 'n\e[2Jx\ry\nFORGED line' "$2"; then pass "$1: escaped"
    else fail "$1: raw control bytes or forged line: $(LC_ALL=C cat -v "$2" | head -5)"; fi
}
$G ls "$T/bad" >"$T/ls.txt"; check "ls" "$T/ls.txt"
grep -qF 'j\u{009b}z\u{202e}evil' "$T/ls.txt" && grep -q 'evilé' "$T/ls.txt" &&
    pass "ls: C1 and bidi override spelled out, é kept" || fail "ls job: $(cat -v "$T/ls.txt")"
$G summary "$T/bad" >"$T/summary.txt"; check "summary" "$T/summary.txt"
$G verdict "$T/bad" >"$T/verdict.txt"; check "verdict" "$T/verdict.txt"
$G diff "$T/good" "$T/bad" >"$T/diff.txt" 2>&1
clean "$T/diff.txt" && grep -q '^B: ' "$T/diff.txt" && pass "diff: no control byte, no forged line" ||
    fail "diff: $(LC_ALL=C cat -v "$T/diff.txt" | head -5)"
timeout 10 $G watch --all --once --rows 0 --cols 0 "$T/bad" </dev/null >"$T/watch.txt"; check "watch" "$T/watch.txt"
if command -v python3 >/dev/null; then
    $G ls --json "$T/bad" | python3 -c '
import json, sys
hosts = [rec["host"] for rec in json.load(sys.stdin)]
sys.exit(0 if any("\x1b[2J" in h and "\nFORGED" in h for h in hosts) else 1)' &&
        pass "ls --json keeps the raw host (JSON-escaped)" || fail "ls --json host changed"
fi

# a hostile file name in an error message
bad_name="$T/bad2/gdrtrace.x${esc}[31mRED.h.9.rec"
mkdir -p "$T/bad2"
printf 'GDRTRACE' >"$bad_name"
$G ls "$T/bad2" >"$T/err.txt" 2>&1
clean "$T/err.txt" && grep -qF 'gdrtrace.x\e[31mRED.h.9.rec' "$T/err.txt" &&
    pass "a file name in an error message is escaped" || fail "error message: $(cat -v "$T/err.txt")"

# GDRTRACE_ARCHIVE_MAX
$G dump -o "$T/a.zst" "$T/good" >/dev/null || fail "dump"
for v in -1 0 4G 010x 17179869185; do
    out=$(GDRTRACE_ARCHIVE_MAX=$v $G ls "$T/a.zst" 2>&1); rc=$?
    if [ $rc = 0 ] && [ "$(grep -c "GDRTRACE_ARCHIVE_MAX='$v'" <<<"$out")" = 1 ] &&
       grep -q "using 4294967296" <<<"$out" && grep -q node-a <<<"$out"; then
        pass "GDRTRACE_ARCHIVE_MAX=$v: one WARN, default cap used"
    else
        fail "GDRTRACE_ARCHIVE_MAX=$v: exit $rc: $out"
    fi
done
out=$(GDRTRACE_ARCHIVE_MAX=1000 $G ls "$T/a.zst" 2>&1); rc=$?
[ $rc = 2 ] && ! grep -q WARN <<<"$out" && pass "GDRTRACE_ARCHIVE_MAX=1000 is enforced (archive refused)" ||
    fail "GDRTRACE_ARCHIVE_MAX=1000: exit $rc: $out"

finish "all escaping and reader-variable checks passed"
