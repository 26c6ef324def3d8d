#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-config-doc.sh — docs/configuration.md promises every GDRTRACE_*
# variable in one table: each name the common layer, the plugin, the shim or the tools read
# (a string literal "GDRTRACE_..." in their C sources) must appear there as
# `NAME`, and each variable that table documents must still be read
# somewhere (code, tests or scripts), so the table neither misses nor
# invents one.
set -u
cd "$(dirname "$0")/../.." || exit 1
doc=docs/configuration.md
fail=0
used=$(grep -rhoE '"GDRTRACE_[A-Z0-9_]+"' common plugin shim tools include | tr -d '"' | sort -u)
[ -n "$used" ] || { echo "FAIL: found no GDRTRACE_* names in the sources"; exit 1; }
for v in $used; do
    if ! grep -q "\`$v\`" "$doc"; then
        echo "FAIL: $v is read by the code but missing from $doc"
        fail=1
    fi
done
documented=$(grep -oE '`GDRTRACE_[A-Z0-9_]+`' "$doc" | tr -d '`' | sort -u)
for v in $documented; do
    if ! grep -rqE "$v\\b" common plugin shim tools include tests scripts Makefile \
        --include='*.c' --include='*.h' --include='*.sh' --include='*.py' --include='*.mk' \
        --include=Makefile; then
        echo "FAIL: $doc documents $v, which nothing reads"
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "PASS: $(wc -w <<< "$used") variables read by the code, $(wc -w <<< "$documented") documented, none missing either way"
exit "$fail"
