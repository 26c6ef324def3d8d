/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog_int.h — what the reader of NCCL's log's files share: the line
 * reader (nccllog.c) puts facts into the state nccllog_state.c keeps,
 * through these.  Private to tools/lib/nccllog*.c.
 */
#ifndef GDRTRACE_TOOLS_NCCLLOG_INT_H
#define GDRTRACE_TOOLS_NCCLLOG_INT_H

#include <stddef.h>
#include <string.h>

#include "tools/lib/nccllog.h"

/* src[0..n) into dst, cut to cap - 1 bytes and NUL-terminated (invariant 5). */
static inline void gt_nlog_copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The process (host, pid), created on first sight; -1 over the cap. */
long gt_nlog_proc_get(struct gt_nlog *l, const char *host, int pid);
/* A new record of process pi, its init run by thread tid; NULL over a cap
 * (counted as dropped). */
struct gt_nlog_comm *gt_nlog_comm_new(struct gt_nlog *l, long pi, int tid);
/* The process's latest record of pointer ptr not destroyed (NCCL may reuse
 * an address after a destroy); the same among the records older than c. */
struct gt_nlog_comm *gt_nlog_comm_by_ptr(struct gt_nlog *l, long pi, uint64_t ptr);
struct gt_nlog_comm *gt_nlog_comm_by_ptr_before(struct gt_nlog *l, uint64_t ptr,
                                                const struct gt_nlog_comm *c);
/* The record whose init is open on thread tid, NULL none. */
struct gt_nlog_comm *gt_nlog_comm_open_on(struct gt_nlog *l, long pi, int tid);
/* Ends the open phase of thread tid, if it is the process's latest. */
void gt_nlog_phase_close(struct gt_nlog *l, long pi, int tid);
/* The phase a channel line of thread tid joins: the process's latest if it
 * is open and of that thread, else a new one; NULL over a cap. */
struct gt_nlog_phase *gt_nlog_phase_of(struct gt_nlog *l, long pi, int tid);

#endif /* GDRTRACE_TOOLS_NCCLLOG_INT_H */
