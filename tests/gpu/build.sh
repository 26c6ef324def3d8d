#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# build.sh — build everything the GPU-machine runbook needs, on that machine:
# the plugin and the gdrtrace command (`make all`), and the NCCL check program
# (build/gpu/nccl_check, against the system's nccl.h / libnccl.so.2).
#
# That machine has no package registry and no liburcu/cmocka, so they travel
# as unpacked .debs in tests/gpu/deps/root (see docs/results/gpu-nccl.md for
# how that folder is made; pass it to the device with carry).  Source this
# file's env part with `. tests/gpu/build.sh env` to get the same variables.
#
# Exit: 0 built, 1 a build failed (the failing step is named on stderr).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DEPS=$ROOT/tests/gpu/deps/root
if [ -d "$DEPS/usr" ]; then
    export CPATH="$DEPS/usr/include:$DEPS/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ "${1:-}" = env ]; then return 0 2>/dev/null || exit 0; fi
set -u
cd "$ROOT" || exit 1

JOBS=${JOBS:-16}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

echo "== make -j$JOBS all"
if ! make -j"$JOBS" all; then
    echo "build.sh: 'make all' failed (deps: $DEPS)" >&2
    exit 1
fi

echo "== nccl_check"
mkdir -p build/gpu
if ! gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$CUDA_HOME/include" \
        tests/gpu/nccl_check.c -o build/gpu/nccl_check \
        -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lnccl -lcudart; then
    echo "build.sh: nccl_check failed to build (nccl.h in /usr/include? cuda in $CUDA_HOME?)" >&2
    exit 1
fi

# The regcount witness and the refsock reference plugin (build-plugins.sh
# says what each is for).
echo "== regcount and refsock plugins"
if ! bash tests/gpu/build-plugins.sh build/gpu; then
    echo "build.sh: the helper plugins failed to build" >&2
    exit 1
fi

# The DMA-BUF driver: the plugin's registration path and recorder, linked from
# the objects `make all` just built (the .so exports only the NCCL tables).
echo "== dmabuf_reg driver"
# The objects come from make's own lists (every plugin and common source but the
# composition root and the ABI adapters, which would want NCCL's tables), so
# this line cannot fall behind when a file moves or joins a layer.
objs=$(make -s --no-print-directory --eval='gt-print-gpu-objs: ; @echo $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out plugin/core.c plugin/abi/%,$(sort $(PLUGIN_SRCS) $(COMMON_SRCS))))' gt-print-gpu-objs) || {
    echo "build.sh: cannot get the plugin's object list from make" >&2
    exit 1
}
if ! gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -I. -I"$CUDA_HOME/include" \
        tests/gpu/dmabuf_reg.c $objs -o build/gpu/dmabuf_reg \
        -L"$CUDA_HOME/lib64" -Wl,-rpath,"$CUDA_HOME/lib64" -lcudart -ldl -lpthread; then
    echo "build.sh: tests/gpu/dmabuf_reg.c failed to build (step 6 will fail)" >&2
    exit 1
fi
ls -l build/default/libnccl-net-gdrtrace.so build/default/gdrtrace build/gpu/
