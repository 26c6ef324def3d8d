#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-examples.sh — docs/examples/ is what the built gdrtrace prints today,
# and the docs point only at examples that exist (issue 21: no drift, no
# dangling references).
#
# tests/reader/gen-examples.sh regenerates every example into a scratch
# folder; each must equal the checked-in file byte for byte, except the
# harness-*.txt ones: they come from a live run of the harness on whatever
# machine runs the script (host name, kernel, interface, pids, latencies),
# so only their presence and the verdict line are checked.  A file in
# docs/examples/ that the script does not make must be referenced from the
# docs (k8s-prune.yaml is written by hand).  On failure: run
#     make tests && tests/reader/gen-examples.sh
# and review the diff.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build/default}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if ! EXAMPLES_DIR=$tmp/gen BUILD=$BUILD tests/reader/gen-examples.sh >"$tmp/gen.log" 2>&1; then
    tail -n 20 "$tmp/gen.log"
    echo "FAIL: gen-examples.sh failed"
    exit 1
fi
mask_zsize() { sed -E 's/-> [0-9]+ bytes \(ratio [0-9.]+\)/-> N bytes (ratio N)/' "$1"; }
verdict_words() { grep -oE '(DIRECT-DMABUF|DIRECT-PEERMEM|HOST-STAGED|MIXED|FALLBACK|ERROR|NO-DATA|BYPASSED)' "$1" | sort -u; }
n=0
for f in "$tmp"/gen/*; do
    name=$(basename "$f")
    doc=docs/examples/$name
    n=$((n + 1))
    if [ ! -f "$doc" ]; then
        bad "$doc is not checked in (gen-examples.sh makes it)"
        continue
    fi
    case "$name" in
        harness-*) diff -u <(verdict_words "$doc") <(verdict_words "$f") >"$tmp/d" ;;
        # The compressed size depends on the recorded pid namespace (format
        # 1.4: the generating machine's), so only that figure is masked.
        dump*) diff -u <(mask_zsize "$doc") <(mask_zsize "$f") >"$tmp/d" ;;
        *) diff -u "$doc" "$f" >"$tmp/d" ;;
    esac
    if [ -s "$tmp/d" ]; then
        bad "$doc differs from what gdrtrace prints now:"
        head -n 20 "$tmp/d"
    fi
done
[ "$n" -gt 0 ] || bad "gen-examples.sh made no example"
for doc in docs/examples/*; do
    name=$(basename "$doc")
    [ -e "$tmp/gen/$name" ] && continue
    grep -rqF "examples/$name" README.md docs --include='*.md' ||
        bad "$doc is neither generated nor referenced from the docs"
done
# Every reference from the docs to an example names a file that exists.
while IFS= read -r ref; do
    [ -e "docs/examples/$ref" ] || bad "the docs refer to docs/examples/$ref, which does not exist"
done < <(grep -rhoE 'examples/[A-Za-z0-9._-]+\.(txt|json|yaml|md)' README.md docs --include='*.md' | sed 's#.*examples/##' | sort -u)
[ $fail -eq 0 ] && echo "PASS: $n generated examples match docs/examples/; every reference resolves"
exit $fail
