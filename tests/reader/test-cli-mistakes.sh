#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-cli-mistakes.sh — what a user's slip gets back: the real cause, once.
#  * a misspelt command: "did you mean" and the commands on one line, exit 64
#    (not the 25 lines of --help);
#  * a path that does not exist, a --job that matches nothing: the next: line
#    (text and JSON) and stderr's note name that, not "NCCL did not load the
#    plugin";
#  * watch --once on a path that cannot be read: exit 2, the path named;
#  * dump -o NAME not *.zst: written, and a note that a folder scan skips it.
. tests/reader/lib.sh
out=$($G verdcit 2>&1); rc=$?
[ $rc = 64 ] && grep -qx "gdrtrace: unknown command 'verdcit'; did you mean 'verdict'?" <<<"$out" &&
    [ "$(wc -l <<<"$out")" -le 2 ] && pass "verdcit: did you mean 'verdict', 2 lines, exit 64" ||
    fail "verdcit: exit $rc: $out"
out=$($G pr 2>&1); grep -q "did you mean 'prune'" <<<"$out" && pass "pr: did you mean 'prune' (the one it begins)" ||
    fail "pr: $out"
out=$($G zzzzzz 2>&1); rc=$?
[ $rc = 64 ] && ! grep -q "did you mean" <<<"$out" && grep -q "^commands: ls summary verdict" <<<"$out" &&
    pass "zzzzzz: no guess, the commands listed" || fail "zzzzzz: exit $rc: $out"

mkdir -p "$T/d"
$FX dmabuf "$T/d/gdrtrace.demo.node-a.1.rec" --job demo
for c in verdict summary; do
    $G $c "$T/typo" >"$T/o" 2>"$T/e"; rc=$?
    grep -q "^ *next: 1 input(s) named above could not be read" "$T/o" && ! grep -q "did not load" "$T/o" "$T/e" &&
        grep -q "typo: No such file" "$T/e" && pass "$c PATH-TYPO: next and the note name the unreadable path (exit $rc)" ||
        fail "$c PATH-TYPO: $(cat "$T/o" "$T/e")"
    $G $c --job demoo "$T/d" >"$T/o" 2>"$T/e"
    grep -q "^ *next: --job demoo matched none of the recorders read (e.g. --job demo" "$T/o" &&
        ! grep -q "did not load" "$T/o" "$T/e" && grep -q "cause: --job demoo" "$T/e" &&
        pass "$c --job demoo: next and the note name the job filter" || fail "$c --job demoo: $(cat "$T/o" "$T/e")"
done
$G verdict --json "$T/typo" 2>/dev/null | grep -q '"next": "1 input(s) named above could not be read' &&
    pass "verdict --json PATH-TYPO: next names the path" || fail "verdict --json: $($G verdict --json "$T/typo" 2>&1)"
# no cause known: the usual likely causes stay
$G verdict "$T/empty" 2>&1 | grep -q "NCCL did not load the plugin" &&
    pass "an empty folder: the likely causes as before" || fail "empty folder: no likely causes"

$G watch --once "$T/typo" >"$T/o" 2>"$T/e"; rc=$?
[ $rc = 2 ] && grep -q "typo: No such file" "$T/e" && pass "watch --once PATH-TYPO: exit 2, the path named" ||
    fail "watch --once PATH-TYPO: exit $rc: $(cat "$T/e")"
$G watch --once "$T/d" >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && pass "watch --once on a readable folder: exit 0" || fail "watch --once: exit $rc"
# dump -o NAME that a folder scan skips: written, and said
mkdir -p "$T/arch"
$G dump -o "$T/arch/node1.gtz" "$T/d" >/dev/null 2>"$T/e"; rc=$?
[ $rc = 0 ] && [ -s "$T/arch/node1.gtz" ] && grep -q "node1.gtz is not named \*.zst: reading its folder" "$T/e" &&
    pass "dump -o node1.gtz: written, with a note that a folder scan skips it" || fail "dump -o .gtz: exit $rc: $(cat "$T/e")"
$G dump -o "$T/arch/node1.zst" "$T/d" >/dev/null 2>"$T/e"
[ ! -s "$T/e" ] && pass "dump -o node1.zst: no note" || fail "dump -o .zst: $(cat "$T/e")"
finish "test-cli-mistakes: ok"
