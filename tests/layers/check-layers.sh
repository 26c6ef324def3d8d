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
        # The reader: a library (inputs -> one model of the job), renderers
        # that are functions of that model, and thin commands over both.
        tools/lib/*)    echo "nccl/ gdrtrace/ common/ tools/lib/" ;;
        tools/render/*) echo "nccl/ gdrtrace/ common/ tools/lib/ tools/render/" ;;
        tools/*)        echo "nccl/ gdrtrace/ common/ tools/" ;;
        *)              echo "*" ;;
    esac
}

# Includes refused even where the prefix is allowed: the reader reads the
# on-disk contract (include/gdrtrace/), never the plugin's internal
# interface; only doctor, which probes the node, loads libibverbs/libcuda;
# renderers take the model, never the parsers of files and logs.
denied_for() {
    case "$1" in
        tools/cmd/doctor/*) echo "common/gt_net.h" ;;
        tools/render/*) echo "common/gt_net.h common/dl/ tools/lib/inputs.h tools/lib/archive.h tools/lib/nccllog.h" ;;
        tools/*)        echo "common/gt_net.h common/dl/" ;;
    esac
}

bad=0 files=0
while IFS= read -r f; do
    files=$((files + 1))
    allowed=$(allowed_for "$f")
    denied=$(denied_for "$f")
    [ "$allowed" = "*" ] && continue
    while IFS=: read -r line inc; do
        ok=0
        for p in $allowed; do
            case "$inc" in "$p"*) ok=1 ;; esac
        done
        for p in $denied; do
            case "$inc" in "$p"*) ok=0 ;; esac
        done
        if [ $ok = 0 ]; then
            echo "check-layers: $f:$line includes \"$inc\"; ${f%/*}/ may include only: $allowed${denied:+ (never: $denied)}"
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

# JSON keys are written by the JSON renderers only (a small script of its own).
bash tests/layers/check-json-keys.sh || exit 1
