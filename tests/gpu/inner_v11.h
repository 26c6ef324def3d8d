// SPDX-License-Identifier: Apache-2.0
/*
 * inner_v11.h — what the GPU runbook's wrapper plugins (regcount_plugin.c,
 * refsock_plugin.c) share: loading the v11 table of the plugin they wrap, and
 * the init they export when that fails, so that NCCL reports the wrapper as
 * failed to initialise (and falls back) instead of running without it.
 * Header-only: each wrapper is built as one .so from one .c file.
 */
#ifndef GDRTRACE_TESTS_GPU_INNER_V11_H
#define GDRTRACE_TESTS_GPU_INNER_V11_H

#include <dlfcn.h>
#include <stdio.h>

#include "nccl/net_v11.h"

static ncclResult_t broken_init(void **ctx, uint64_t commId, ncclNetCommConfig_v11_t *config,
                                ncclDebugLogger_t log, ncclProfilerCallback_t prof)
{
    (void)ctx, (void)commId, (void)config, (void)log, (void)prof;
    return ncclInternalError;
}

/* The ncclNetPlugin_v11 of the library at `path`, or NULL with the reason on
 * stderr under `who`.  The library stays loaded for the life of the process. */
static const ncclNet_v11_t *load_inner_v11(const char *who, const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s: dlopen %s: %s\n", who, path, dlerror());
        return NULL;
    }
    const ncclNet_v11_t *t = dlsym(lib, "ncclNetPlugin_v11");
    if (!t)
        fprintf(stderr, "%s: %s has no ncclNetPlugin_v11\n", who, path);
    return t;
}

#endif
