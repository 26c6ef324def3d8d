#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check-layers.sh — includes point only down (docs/hacking.md, "Layers").
#
# Each folder may include its own headers and those of the layers below it;
# an #include "..." outside that list fails the check with file:line and the
# rule it broke.  System headers (<...>) are not ours and are not checked.
set -u
cd "$(dirname "$0")/../.."

# folder -> the prefixes its quoted includes may start with.  "nccl/" and
# "gdrtrace/" are include/ (-Iinclude); everything else is a repo path.
allowed_for() {
    case "$1" in
        include/*)      echo "nccl/ gdrtrace/" ;;
        common/*)       echo "nccl/ gdrtrace/ common/" ;;
        plugin/reg/*)   echo "nccl/ gdrtrace/ common/ plugin/reg/" ;;
        plugin/oob/*)   echo "nccl/ gdrtrace/ common/ plugin/oob/" ;;
        plugin/sock/*)  echo "nccl/ gdrtrace/ common/ plugin/oob/ plugin/sock/" ;;
        plugin/ib/*)    echo "nccl/ gdrtrace/ common/ plugin/reg/ plugin/oob/ plugin/ib/" ;;
        plugin/inner/*) echo "nccl/ gdrtrace/ common/ plugin/inner/" ;;
        plugin/gpumem/*) echo "nccl/ gdrtrace/ common/ plugin/reg/ plugin/gpumem/" ;;
        shim/*)         echo "nccl/ gdrtrace/ common/ shim/" ;;
        plugin/*)       echo "nccl/ gdrtrace/ common/ shim/ plugin/" ;;
        tools/*)        echo "nccl/ gdrtrace/ common/ tools/" ;;
        *)              echo "*" ;;
    esac
}

bad=0 files=0
while IFS= read -r f; do
    files=$((files + 1))
    allowed=$(allowed_for "$f")
    [ "$allowed" = "*" ] && continue
    while IFS=: read -r line inc; do
        ok=0
        for p in $allowed; do
            case "$inc" in "$p"*) ok=1 ;; esac
        done
        if [ $ok = 0 ]; then
            echo "check-layers: $f:$line includes \"$inc\"; ${f%%/*} may include only: $allowed"
            bad=$((bad + 1))
        fi
    done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f" |
             sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/')
done < <(git ls-files '*.c' '*.h' | grep -v '^tests/')

if [ $bad -ne 0 ]; then
    echo "check-layers: $bad include(s) point up a layer (rule: docs/hacking.md, Layers)"
    exit 1
fi
echo "check-layers: $files source files, every include points down"
