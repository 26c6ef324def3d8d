#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# build-plugins.sh OUTDIR — build the GPU runbook's two helper net plugins,
# which need no CUDA or NCCL headers (our own declarations), into OUTDIR:
#   libnccl-net-regcount.so  the witness that counts NCCL's registrations
#                            around our plugin (gpucheck.py reader --regcount);
#   libnccl-net-refsock.so   NCCL Socket's data-path shape as a plugin
#                            (bw-knobs.sh, docs/results/gpu-nccl.md Runs 6-8).
# The one place both are compiled: tests/gpu/build.sh (GPU machine) and
# tests/harness/harness_refsock.sh (CI) call it.  Run from the repository
# root.  CC picks the compiler (default cc).
# Exit: 0 built; 1 a build failed (its first errors on stderr).
set -u
out=${1:?usage: build-plugins.sh OUTDIR}
mkdir -p "$out" || exit 1
for t in regcount refsock; do
    if ! ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -I. -fPIC -shared \
        "tests/gpu/${t}_plugin.c" -o "$out/libnccl-net-$t.so" -ldl -lpthread 2> "$out/$t.cc.log"; then
        echo "build-plugins.sh: tests/gpu/${t}_plugin.c does not build:" >&2
        head -20 "$out/$t.cc.log" >&2
        exit 1
    fi
    rm -f "$out/$t.cc.log"
done
