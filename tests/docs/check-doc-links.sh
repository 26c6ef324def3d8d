#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-doc-links.sh — the documentation speaks of this repository alone:
#  * every relative link of README.md and docs/**/*.md ([text](path),
#    anchors aside) resolves to a file or folder of the repository;
#  * the reference docs (README.md, docs/*.md; not docs/results/, which is
#    history by design) name no absolute path of a machine (/work/, /home/,
#    /root/), no `shared/` notes nor a .md file the repository lacks, no
#    issue numbers and no
#    commit of this repository's history (a 7-40 digit hex word that git
#    resolves to a commit; skipped outside a git checkout).
# Each finding is one line: FILE:LINE: what, the text.
set -u
cd "$(dirname "$0")/../.." || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
mapfile -t all < <(ls README.md; find docs -name '*.md' | sort)
mapfile -t ref < <(ls README.md docs/*.md)

# 1. Relative links resolve (outside code spans and fenced blocks).
for f in "${all[@]}"; do
    d=$(dirname "$f")
    while IFS=: read -r n target; do
        case $target in http://* | https://* | mailto:* | '#'*) continue ;; esac
        p=${target%%#*}
        [ -z "$p" ] && continue
        [ -e "$d/$p" ] || bad "$f:$n: dangling link ($target)"
    done < <(awk '/^```/ { fence = !fence; next } !fence {
                  line = $0; gsub(/`[^`]*`/, "", line)
                  while (match(line, /\]\([^) ]+\)/)) {
                      print NR ":" substr(line, RSTART + 2, RLENGTH - 3)
                      line = substr(line, RSTART + RLENGTH)
                  } }' "$f")
done

# 2. Reference docs: nothing of one machine, of our notes or of our history.
for f in "${ref[@]}"; do
    grep -nE '(^|[^A-Za-z0-9_.~-])/(work|home|root)/' "$f" | while IFS= read -r l; do
        bad "$f:${l%%:*}: an absolute machine path: ${l#*:}"
    done
    grep -nE '(^|[^A-Za-z0-9_./-])shared/[A-Za-z]' "$f" | while IFS= read -r l; do
        bad "$f:${l%%:*}: a reference to shared/ notes (not in this repository): ${l#*:}"
    done
    grep -nE '\.\./shared' "$f" | while IFS= read -r l; do
        bad "$f:${l%%:*}: a reference to notes outside the repository: ${l#*:}"
    done
    # a document named must be one of this repository's (or one a tool of
    # ours writes: fieldtest's and gpumem.sh's summaries, install's example)
    grep -noE '[A-Za-z0-9_-]+\.md\b' "$f" | while IFS=: read -r n m; do
        case $m in SUMMARY.md | summary.md | SITE-NOTES.md) continue ;; esac
        [ -n "$(git ls-files "*/$m" "$m" 2>/dev/null | head -1)" ] || [ -n "$(find . -name "$m" -not -path './build/*' | head -1)" ] ||
            bad "$f:$n: names $m, which is not in this repository"
    done
    grep -niE '\bissues? #?[0-9]+|\(#[0-9]+\)|\bPR #?[0-9]+' "$f" | while IFS= read -r l; do
        bad "$f:${l%%:*}: an issue number (history goes to docs/results/): ${l#*:}"
    done
    if git rev-parse --git-dir >/dev/null 2>&1; then
        grep -noE '(^|[^0-9A-Za-z_x])[0-9a-f]{7,40}\b' "$f" | while IFS=: read -r n h; do
            h=${h//[^0-9a-f]/}
            [[ $h =~ [a-f] && $h =~ [0-9] ]] || continue
            [ "$(git cat-file -t "$h" 2>/dev/null)" = commit ] &&
                bad "$f:$n: a commit hash as history ($h): history goes to docs/results/"
        done
    fi
done | tee "${TMPDIR:-/tmp}/check-doc-links.$$"
[ -s "${TMPDIR:-/tmp}/check-doc-links.$$" ] && fail=1
rm -f "${TMPDIR:-/tmp}/check-doc-links.$$"
[ $fail = 0 ] && echo "PASS: doc links resolve; reference docs name no machine path, notes, issue or commit"
exit $fail
