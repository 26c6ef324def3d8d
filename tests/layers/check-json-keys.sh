#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-json-keys.sh — the reader's JSON keys are written in one place
# (docs/hacking.md, "Layers"): only the writer (tools/render/json.c) and the
# JSON renderers (tools/render/json_*.c) call the writer's key and value
# functions, so a key is named once, beside the others of its document.
# Commands set a writer up (gj_init, gj_done) and call a renderer.
#
# Exempt: tools/cmd/doctor/, whose document (`doctor --json`) describes the
# node, not a recorder; it is written by its own printer and read back by
# `doctor --compare` on another node, and doctor links none of the reader.
set -u
cd "$(dirname "$0")/../.."

# Files still writing keys themselves until their split lands; each must go
# from here when it does (the check fails on a file listed that no longer
# writes a key, so the list only shrinks).
pending=""

keys='\bgj_(obj|arr|str|u64|i64|dbl|bool|null)[[:space:]]*\('
bad=0 left=0
while IFS= read -r f; do
    case "$f" in
        tools/render/json.c | tools/render/json_*.c | tools/render/json.h | tools/cmd/doctor/*) continue ;;
    esac
    if grep -qxF "$f" <<<"$pending"; then
        left=$((left + 1))
        continue
    fi
    grep -nE "$keys" "$f" | head -3 | while IFS=: read -r line _; do
        echo "check-json-keys: $f:$line writes a JSON key; only tools/render/json.c and tools/render/json_*.c may"
    done
    bad=$((bad + 1))
done < <(git ls-files 'tools/*.c' 'tools/*.h' | xargs grep -lE "$keys" 2>/dev/null)

for f in $pending; do
    if ! grep -qE "$keys" "$f" 2>/dev/null; then
        echo "check-json-keys: $f writes no JSON key any more: remove it from the pending list"
        bad=$((bad + 1))
    fi
done
if [ $bad -ne 0 ]; then
    echo "check-json-keys: $bad file(s) out of place (rule: docs/hacking.md, Layers)"
    exit 1
fi
echo "check-json-keys: JSON keys written only in tools/render/json*.c ($left file(s) pending)"
