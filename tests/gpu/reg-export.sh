#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# reg-export.sh — the registration policy's own DMA-BUF export on a real GPU
# (tests/unit/test_dl_cuda.c, which needs no cmocka): cuMemGetHandleForAddressRange
# with NCCL's flags (the PCIe mapping type only on a C2C GPU; 0 on an x86
# H100/H200), the exported fd handed to ibv_reg_dmabuf_mr (a fake NIC) and
# closed, and a buffer running past its allocation refused before exporting.
# Writes $OUT/reg-export/{versions.txt,build.log,test_dl_cuda.txt}.
# Exit: 0 pass, 77 no GPU/libcuda, else fail.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/gpu/build.sh
. "$ROOT/tests/gpu/build.sh" env
set -u
cd "$ROOT" || exit 1
O=${OUT:-/tmp}/reg-export
mkdir -p "$O"
{
    date -u
    nvidia-smi -L 2>&1
    cat /proc/driver/nvidia/version 2>&1
    git log --oneline -1 2>&1
} >"$O/versions.txt"
if ! timeout 300 make -j"${JOBS:-16}" build/default/tests/test_dl_cuda >"$O/build.log" 2>&1; then
    tail -n 20 "$O/build.log"
    echo "reg-export: build failed"
    exit 1
fi
timeout 120 build/default/tests/test_dl_cuda >"$O/test_dl_cuda.txt" 2>&1
rc=$?
cat "$O/test_dl_cuda.txt"
echo "reg-export: test_dl_cuda exit $rc"
exit $rc
