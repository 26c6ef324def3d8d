#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-config-doc.sh — docs/configuration.md promises every GDRTRACE_*
# variable in one table: each name the common layer, the plugin, the shim or the tools read
# (a string literal "GDRTRACE_..." in their C sources), and each the build,
# tests/run-tests.sh or scripts/ read (${GDRTRACE_...}), must appear there as
# `NAME`, and each variable that table documents must still be read
# somewhere (code, tests or scripts), so the table neither misses nor
# invents one.  Retired variables (the code WARNs when one is set, through
# gt_env_retired("NAME", ...)) are checked both ways against the "Retired
# variables" section: each one the code retires is listed there, each one
# listed there is retired by the code, and none is still documented as live.
# NCCL_* variables the code reads are checked both ways against the first
# column of the "NCCL's own variables" table.
set -u
cd "$(dirname "$0")/../.." || exit 1
doc=docs/configuration.md
fail=0
srcs="common plugin shim tools include"
# A literal handed to gt_nccl_unnote() is a key prefix, not a variable.
# common/env_known.c is the table of every name (checked below): not a read.
literals() { grep -rhE --exclude=env_known.c "\"$1" $srcs | grep -v 'gt_nccl_unnote(' | grep -oE "\"$1[A-Z0-9_]+\"" |
             tr -d '"' | sort -u; }
used=$(literals GDRTRACE_)
[ -n "$used" ] || { echo "FAIL: found no GDRTRACE_* names in the sources"; exit 1; }
for v in $used; do
    if ! grep -q "\`$v\`" "$doc"; then
        echo "FAIL: $v is read by the code but missing from $doc"
        fail=1
    fi
done
# The knobs the build, the test runner and the shipped scripts read
# (${GDRTRACE_X...} or $(GDRTRACE_X)): documented too.
knobs=$(grep -rhoE '\$[{(]GDRTRACE_[A-Z0-9_]+' tests/run-tests.sh Makefile scripts \
    $(find . -name module.mk -not -path './build/*') | grep -oE 'GDRTRACE_[A-Z0-9_]+' | sort -u)
for v in $knobs; do
    if ! grep -q "\`$v\`" "$doc"; then
        echo "FAIL: $v is read by the build, the test runner or scripts/ but missing from $doc"
        fail=1
    fi
done
documented=$(grep -oE '`GDRTRACE_[A-Z0-9_]+`' "$doc" | tr -d '`' | sort -u)
for v in $documented; do
    if ! grep -rqE "$v\\b" common plugin shim tools include tests scripts Makefile \
        --exclude=env_known.c --include='*.c' --include='*.h' --include='*.sh' --include='*.py' --include='*.mk' \
        --include=Makefile; then
        echo "FAIL: $doc documents $v, which nothing reads"
        fail=1
    fi
done
# Retired: the code's calls, and the rows of the section (first column only).
retired_code=$(grep -rhoE 'gt_env_retired\("GDRTRACE_[A-Z0-9_]+"' $srcs --include='*.c' |
    grep -oE 'GDRTRACE_[A-Z0-9_]+' | sort -u)
section=$(sed -n '/^## Retired variables/,/^## /p' "$doc")
retired_doc=$(grep -oE '^\| `GDRTRACE_[A-Z0-9_]+`' <<< "$section" | grep -oE 'GDRTRACE_[A-Z0-9_]+' |
    sort -u)
live=$(sed '/^## Retired variables/,/^## /d' "$doc")
for v in $retired_code; do
    if ! grep -qx "$v" <<< "$retired_doc"; then
        echo "FAIL: the code retires $v (gt_env_retired) but $doc's 'Retired variables' does not list it"
        fail=1
    fi
    if grep -qE "^\| [^|]*\`$v\`" <<< "$live"; then
        echo "FAIL: $v is retired by the code but still documented as a live variable in $doc"
        fail=1
    fi
done
for v in $retired_doc; do
    if ! grep -qx "$v" <<< "$retired_code"; then
        echo "FAIL: $doc lists $v as retired, but no gt_env_retired(\"$v\", ...) call warns about it"
        fail=1
    fi
done
# NCCL's own variables the code reads (a string literal "NCCL_..."): each is
# in the first column of the table under "## NCCL's own variables", and each
# named there is read by the code.
nccl_used=$(literals NCCL_)
nccl_section=$(sed -n "/^## NCCL's own variables/,/^## /p" "$doc")
nccl_doc=$(grep -E '^\| `NCCL_' <<< "$nccl_section" | cut -d'|' -f2 | grep -oE 'NCCL_[A-Z0-9_]+' |
    sort -u)
for v in $nccl_used; do
    if ! grep -qx "$v" <<< "$nccl_doc"; then
        echo "FAIL: the code reads $v but $doc's \"NCCL's own variables\" table does not list it"
        fail=1
    fi
done
for v in $nccl_doc; do
    if ! grep -qx "$v" <<< "$nccl_used"; then
        echo "FAIL: $doc's \"NCCL's own variables\" table lists $v, which the code does not read"
        fail=1
    fi
done
# The names the plugin knows (a misspelt one gets a WARN naming the closest,
# common/env_known.c): exactly the names this page lists.
known=$(grep -oE '"GDRTRACE_[A-Z0-9_]+"' common/env_known.c | tr -d '"' | sort -u)
all_doc=$(grep -oE '`GDRTRACE_[A-Z0-9_]+`' "$doc" | tr -d '`' | sort -u)
for v in $all_doc; do
    grep -qx "$v" <<< "$known" ||
        { echo "FAIL: $v is in $doc but not in common/env_known.c (add it there)"; fail=1; }
done
for v in $known; do
    grep -qx "$v" <<< "$all_doc" ||
        { echo "FAIL: common/env_known.c lists $v, which $doc does not"; fail=1; }
done
[ "$fail" = 0 ] && echo "PASS: $(wc -w <<< "$used") variables read by the code, $(wc -w <<< "$documented") documented, $(wc -w <<< "$retired_code") retired and listed as such, $(wc -w <<< "$nccl_used") NCCL variables read and listed, none missing either way"
exit "$fail"
