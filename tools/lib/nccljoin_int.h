/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin_int.h — what the join's files share (nccljoin.c, the join;
 * nccljoin_order.c, its step 3b): the key of each of NCCL's records, the
 * recorders by process and the lookups built once per join.  Private to
 * them: nothing else includes it.
 */
#ifndef GDRTRACE_TOOLS_NCCLJOIN_INT_H
#define GDRTRACE_TOOLS_NCCLJOIN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tools/lib/nccljoin.h"

/* A log record's communicator key (step 1, step 2). */
struct rkey {
    uint64_t key;
    uint8_t is_id;   /* key is NCCL's commId */
    uint8_t by_elim; /* … found by elimination (step 2) */
    size_t idx;      /* the record */
};

/* The recorders by (short host, pid), sorted by rproc_cmp. */
struct rproc {
    const char *host;
    size_t hl;
    int pid;
    size_t rec;
};

static inline int rproc_cmp(const void *a, const void *b)
{
    const struct rproc *x = a, *y = b;
    size_t n = x->hl < y->hl ? x->hl : y->hl;
    int c = strncmp(x->host, y->host, n);
    if (c)
        return c;
    if (x->hl != y->hl)
        return x->hl < y->hl ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The first index of (host, pid) in the sorted array, or n. */
static inline size_t rproc_find(const struct rproc *rp, size_t n, const char *host, int pid)
{
    struct rproc key = {host, strcspn(host, "."), pid, 0};
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rproc_cmp(&rp[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && !rproc_cmp(&rp[lo], &key) ? lo : n;
}

struct idref; /* the job's communicators by commId (nccljoin.c) */

struct ctx {
    const struct gt_nlog *l;
    const struct gt_job *j;
    struct rproc *rp; /* recorders by (short host, pid) */
    size_t nrp;
    struct idref *cid; /* the job's communicators by commId */
    size_t ncid;
    long *proc_comm;    /* per recorder: its ABI <= v10 process communicator, -1 */
    size_t *rank_start; /* per recorder: its first entry in j->ranks; [nrec] = nranks */
    struct rextra *ex;  /* per log record: step 3b's additions */
};

/* What step 3b adds to a log record. */
struct rextra {
    uint32_t ch[GT_NLOG_CH_COUNT]; /* lines attributed by order */
    uint32_t gdrdma;
    uint32_t amb_resolved; /* of its ambiguous lines, those now given to one record */
};

/* Step 3b: gives process by process the ambiguous NET/gdrtrace lines of
 * NCCL's log by connection order (nccljoin.h), into x->ex and out->order,
 * out->by_order. */
void gt_nj_by_order(const struct ctx *x, const struct rkey *k, struct gt_nccl_join *out);

#endif /* GDRTRACE_TOOLS_NCCLJOIN_INT_H */
