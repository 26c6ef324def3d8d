#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-man.sh — the man pages say what --help says (dist/gen-man.sh makes
# them from the --help texts at build time; this catches a typesetting rule
# that loses or mangles text, and a page left over or missing):
#   * one page per command of `gdrtrace --help`, plus gdrtrace.1 and
#     gdrtrace-fieldtest.1 (the field kit's), nothing else;
#   * every line of `gdrtrace --help` and of each `gdrtrace CMD --help`
#     appears, word for word, in the rendered page (gdrtrace.1 holds them all);
#     so does every line of `gdrtrace-fieldtest --help` in its page;
#   * the built pages are what the generator makes from the built binary now;
#   * groff renders them without a warning; --version is documented.
set -u
BUILD=${BUILD:-build/default}
tool=$BUILD/gdrtrace
mandir=$BUILD/man
command -v groff >/dev/null || { echo "SKIP: groff not installed (Debian groff-base)"; exit 77; }
[ -x "$tool" ] && [ -f "$mandir/gdrtrace.1" ] || { echo "FAIL: $tool or $mandir not built (make)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

render() { groff -man -Tascii -P-cbou -ww "$1" 2>"$tmp/groff.err" | tr -s ' \t\n' '   '; }
# Every non-empty help line, without the "usage:"/"exit:" labels the page
# turns into section names, must be a substring of the rendered page.
covers() { # PAGE HELP-TEXT-FILE
    local text line n=0
    text=$(render "$1")
    [ -s "$tmp/groff.err" ] && bad "groff warns on $1: $(head -n 3 "$tmp/groff.err")"
    while IFS= read -r line; do
        line=$(printf '%s' "$line" | sed -E 's/^(usage|[Ee]xit): +//' | tr -s ' \t' '  ' | sed 's/^ //; s/ $//')
        [ -n "$line" ] || continue
        n=$((n + 1))
        # "heading:" lines become section names, upper case on a page of their own.
        case $line in *[!A-Za-z\ :]* | *[!:]) ;; *) case $text in *"${line%:}"* | *"$(printf %s "${line%:}" | tr a-z A-Z)"*) continue ;; esac ;; esac
        case $text in *"$line"*) ;; *) bad "${1##*/} lacks the --help line: $line" ;; esac
    done <"$2"
    [ $n -gt 0 ] || bad "empty help text for ${1##*/}"
}

"$tool" --help >"$tmp/main.txt"
cmds=$(awk '/^commands:$/ {on=1; next} on && /^$/ {exit} on {print $1}' "$tmp/main.txt")
[ -n "$cmds" ] || bad "gdrtrace --help lists no commands"
grep -q -- '--version' "$tmp/main.txt" || bad "gdrtrace --help does not document --version"
covers "$mandir/gdrtrace.1" "$tmp/main.txt"
for c in $cmds; do
    "$tool" "$c" --help >"$tmp/$c.txt" || bad "gdrtrace $c --help exits $?"
    [ -f "$mandir/gdrtrace-$c.1" ] || { bad "no page gdrtrace-$c.1"; continue; }
    covers "$mandir/gdrtrace-$c.1" "$tmp/$c.txt"
    covers "$mandir/gdrtrace.1" "$tmp/$c.txt"
done
dist/gdrtrace-fieldtest --help >"$tmp/fieldtest.txt" || bad "gdrtrace-fieldtest --help exits $?"
if [ -f "$mandir/gdrtrace-fieldtest.1" ]; then
    covers "$mandir/gdrtrace-fieldtest.1" "$tmp/fieldtest.txt"
else
    bad "no page gdrtrace-fieldtest.1 (the field kit is installed as a command)"
fi
for f in "$mandir"/*.1; do
    n=${f##*/}
    n=${n%.1}
    [ "$n" = gdrtrace ] || [ "$n" = gdrtrace-fieldtest ] && continue
    printf '%s\n' $cmds | grep -qx -- "${n#gdrtrace-}" || bad "page $n.1 for a command gdrtrace does not have"
done
render "$mandir/gdrtrace.1" | grep -q -- "--version print 'gdrtrace VERSION'" || bad "gdrtrace.1 does not document --version"
ver=$("$tool" --version | sed -n 's/^gdrtrace //p')
head -n 3 "$mandir/gdrtrace.1" | grep -q "\"gdrtrace $ver\"" || bad "gdrtrace.1 is not of version $ver"
# A tagged paragraph (.TP) is an option or a command, never a line of
# running text: a sentence is not broken into a bold tag mid-paragraph.
for f in "$mandir"/*.1; do
    awk -v f="${f##*/}" 'p { p = 0; if ($0 !~ /^\\fB(\\-|[a-z]+\\fR$)/) print f ": " $0 } /^\.TP$/ { p = 1 }' "$f"
done >"$tmp/tags"
[ -s "$tmp/tags" ] && bad "running text typeset as an option tag: $(head -n 3 "$tmp/tags")"
dist/gen-man.sh "$tool" "$tmp/man" || bad "gen-man.sh failed"
diff -r -x .generated "$mandir" "$tmp/man" >"$tmp/diff" || bad "$mandir is stale: $(head -n 5 "$tmp/diff")"
[ $fail -eq 0 ] && echo "PASS: $(echo $cmds | wc -w) command pages, gdrtrace.1 and gdrtrace-fieldtest.1 carry every --help line"
exit $fail
