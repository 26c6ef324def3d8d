#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-help.sh — every subcommand's help has one shape (the one
# dist/gen-man.sh typesets and dist/gen-completion.sh reads), and every
# mistake gets the whole of it:
#  * `gdrtrace CMD --help`: exit 0, on stdout, starting "usage: gdrtrace CMD",
#    then the synopsis' continuation lines, then only indented lines up to
#    one "exit:" line (with its indented continuations) at the end;
#  * every option the help documents ("  --opt ..." lines) is in the
#    synopsis (--accept-owner too), unless the synopsis says [OPTION...];
#  * an unknown option: exit 64, nothing on stdout, on stderr the whole help
#    (its usage line and its exit line);
#  * the same of the field kit, gdrtrace-fieldtest.
. tests/reader/lib.sh
cmds=$($G --help | awk '/^commands:$/ {on=1; next} on && /^$/ {exit} on {print $1}')
[ -n "$cmds" ] || { fail "gdrtrace --help lists no commands"; finish x; exit 1; }
shape() { # NAME HELP-FILE: the shape's rules broken, one a line (none: ok)
    awk -v n="$1" '
        NR == 1 { if ($0 !~ "^usage: " n "( |$)") print "line 1 is not \"usage: " n " ...\""; syn = 1; next }
        syn && /^ +(gdrtrace|\[)/ { next }
        { syn = 0 }
        ex && /^ / { next }
        ex { print "after the exit line: [" $0 "]"; next }
        /^exit: / { ex = 1; next }
        !/^ / { print "line " NR " is not indented: [" $0 "]" }
        END { if (!ex) print "no \"exit:\" line" }' "$2"
}
synopsis_misses() { # HELP-FILE: documented options not in the synopsis
    local syn o
    syn=$(awk 'NR == 1 || /^ +(gdrtrace|\[)/ && !done { print; next } { done = 1 }' "$1")
    case $syn in *"[OPTION...]"*) return ;; esac
    for o in $(grep -oE '^ {1,2}--[a-z][-a-z]*' "$1" | tr -d ' ' | sort -u); do
        grep -q -- "$o" <<<"$syn" || printf ' %s' "$o"
    done
}
check() { # NAME CMD...: the help of CMD... named NAME
    local name=$1 rc bad miss
    shift
    "$@" --help >"$T/h" 2>"$T/he"
    rc=$?
    bad=$(shape "$name" "$T/h")
    [ $rc = 0 ] && [ ! -s "$T/he" ] && [ -z "$bad" ] && pass "$name --help: exit 0, the shape" ||
        fail "$name --help: exit $rc, $(head -c 300 "$T/he") $bad"
    miss=$(synopsis_misses "$T/h")
    [ -z "$miss" ] && pass "$name: every documented option is in the synopsis" ||
        fail "$name: documented but not in the synopsis:$miss"
    "$@" --no-such-option >"$T/o" 2>"$T/e"
    rc=$?
    [ $rc = 64 ] && [ ! -s "$T/o" ] && grep -q "^usage: $name" "$T/e" && grep -q '^exit: ' "$T/e" &&
        pass "$name --no-such-option: exit 64, the whole help on stderr" ||
        fail "$name --no-such-option: exit $rc, stdout $(wc -l <"$T/o") lines, stderr: $(head -3 "$T/e")"
}
for c in $cmds; do
    check "gdrtrace $c" "$G" "$c"
done
check gdrtrace-fieldtest dist/gdrtrace-fieldtest
# doctor's own mistakes also get the whole help
for a in "--live --no-live" "--compare" "--dmabuf-source=other"; do
    # shellcheck disable=SC2086
    $G doctor $a >"$T/o" 2>"$T/e"
    rc=$?
    [ $rc = 64 ] && grep -q '^gdrtrace doctor: ' "$T/e" && grep -q '^usage: gdrtrace doctor' "$T/e" &&
        pass "doctor $a: exit 64, what was wrong, then the whole help" ||
        fail "doctor $a: exit $rc: $(head -3 "$T/e")"
done
finish "test-help: ok"
