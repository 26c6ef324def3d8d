/* SPDX-License-Identifier: Apache-2.0 */
/*
 * callout.c — the process's sink for announced foreign calls (contract in
 * callout.h).  Invariant: g_sink is NULL or a sink with static lifetime,
 * read with acquire, so a sink's state is initialised before it is used.
 */
#include "common/callout.h"

#include <errno.h>
#include <stddef.h>

static const struct gt_callout_sink *g_sink;

void gt_callout_set_sink(const struct gt_callout_sink *sink)
{
    __atomic_store_n(&g_sink, sink, __ATOMIC_RELEASE);
}

uint64_t gt_callout_begin(int site, const char *kind, const char *path, int version, int dev)
{
    const struct gt_callout_sink *s = __atomic_load_n(&g_sink, __ATOMIC_ACQUIRE);
    if (!s)
        return 0;
    int e = errno;
    uint64_t token = s->calling(site, kind ? kind : "", path ? path : "", version, dev);
    errno = e;
    return token;
}

void gt_callout_end(uint64_t token, int site, int result)
{
    if (!token)
        return;
    const struct gt_callout_sink *s = __atomic_load_n(&g_sink, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    int e = errno;
    s->returned(token, site, result);
    errno = e;
}
