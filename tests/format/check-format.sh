#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-format.sh — every tracked C file is as `make format` leaves it.
#
# The formatter is pinned to Debian 12's clang-format 14 (.clang-format holds
# the style): another major version formats some constructs differently, so
# the check would flip with the machine.  scripts/install-deps.sh installs it.
# Mechanical reformats are listed in .git-blame-ignore-revs.
set -u
cd "$(dirname "$0")/../.."
cf=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$cf" >/dev/null 2>&1; then
    echo "check-format: $cf not found (Debian package clang-format-14; make deps installs it)"
    exit 1
fi
bad=()
while IFS= read -r f; do
    if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
        bad+=("$f")
    fi
done < <(git ls-files '*.c' '*.h')
if [ ${#bad[@]} -ne 0 ]; then
    printf 'check-format: not formatted: %s\n' "${bad[@]}" | head -40
    echo "check-format: ${#bad[@]} file(s) differ from .clang-format; run: make format"
    exit 1
fi
echo "check-format: every tracked .c/.h file matches .clang-format ($cf)"
