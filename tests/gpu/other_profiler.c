/* SPDX-License-Identifier: Apache-2.0 */
/*
 * other_profiler.c — a stand-in for a profiler the job chose itself
 * (NCCL_PROFILER_PLUGIN=<this library>): exports ncclProfiler_v5 and v4,
 * asks for no events, and appends "init <pid> <commId>" to the file
 * OTHER_PROF_OUT names, so tests/gpu/profiler.sh can see that NCCL kept
 * this profiler and did not take gdrtrace's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nccl/profiler.h"

static void note(uint64_t id)
{
    const char *p = getenv("OTHER_PROF_OUT");
    FILE *f = p ? fopen(p, "a") : NULL;
    if (f) {
        fprintf(f, "init %d 0x%llx\n", (int)getpid(), (unsigned long long)id);
        fclose(f);
    }
}

static ncclResult_t init5(void **ctx, uint64_t id, int *mask, const char *name, int nn, int nr,
                          int r, ncclDebugLogger_t l)
{
    (void)name, (void)nn, (void)nr, (void)r, (void)l;
    *ctx = NULL;
    *mask = 0;
    note(id);
    return ncclSuccess;
}

static ncclResult_t init4(void **ctx, int *mask, const char *name, uint64_t id, int nn, int nr,
                          int r, ncclDebugLogger_t l)
{
    return init5(ctx, id, mask, name, nn, nr, r, l);
}

static ncclResult_t start5(void *c, void **h, ncclProfilerEventDescr_v5_t *d)
{
    (void)c, (void)d;
    *h = NULL;
    return ncclSuccess;
}
static ncclResult_t start4(void *c, void **h, ncclProfilerEventDescr_v4_t *d)
{
    (void)c, (void)d;
    *h = NULL;
    return ncclSuccess;
}
static ncclResult_t stop(void *h)
{
    (void)h;
    return ncclSuccess;
}
static ncclResult_t state(void *h, ncclProfilerEventState_t s, ncclProfilerEventStateArgs_v4_t *a)
{
    (void)h, (void)s, (void)a;
    return ncclSuccess;
}
static ncclResult_t fin(void *c)
{
    (void)c;
    return ncclSuccess;
}

__attribute__((visibility("default")))
const ncclProfiler_v5_t ncclProfiler_v5 = {"other", init5, start5, stop, state, fin};
__attribute__((visibility("default")))
const ncclProfiler_v4_t ncclProfiler_v4 = {"other", init4, start4, stop, state, fin};
