/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccllog_state.c — what the reader of NCCL's log keeps (nccllog.h): its
 * processes (an open-addressing table by short host and pid), their
 * communicator records (a chain per process, newest first) and connection
 * phases, each capped (invariant 1: over a cap is counted as dropped,
 * never stored); and the queries over them.  nccllog.c decides from the
 * lines what goes in; this file only keeps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/nccllog_int.h"

/* ---- processes and communicators ---------------------------------------- */

static size_t short_len(const char *host)
{
    return strcspn(host, ".");
}

static uint64_t proc_hash(const char *host, size_t hl, int pid)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < hl; i++)
        h = (h ^ (unsigned char)host[i]) * 1099511628211ULL;
    return (h ^ (uint32_t)pid) * 1099511628211ULL;
}

static long proc_lookup(const struct gt_nlog *l, const char *host, int pid)
{
    if (!l->ptab_size)
        return -1;
    size_t hl = short_len(host), mask = l->ptab_size - 1;
    for (size_t i = proc_hash(host, hl, pid) & mask;; i = (i + 1) & mask) {
        uint32_t e = l->ptab[i];
        if (!e)
            return -1;
        const struct gt_nlog_proc *p = &l->procs[e - 1];
        if (p->pid == pid && strlen(p->host) == hl && !strncmp(p->host, host, hl))
            return (long)e - 1;
    }
}

const struct gt_nlog_proc *gt_nlog_proc_find(const struct gt_nlog *l, const char *host, int pid)
{
    long i = proc_lookup(l, host, pid);
    return i < 0 ? NULL : &l->procs[i];
}

static int ptab_grow(struct gt_nlog *l)
{
    size_t n = l->ptab_size ? l->ptab_size * 2 : 64;
    uint32_t *t = calloc(n, sizeof(*t));
    if (!t)
        return -1;
    for (size_t k = 0; k < l->nproc; k++) {
        const struct gt_nlog_proc *p = &l->procs[k];
        size_t i = proc_hash(p->host, strlen(p->host), p->pid) & (n - 1);
        while (t[i])
            i = (i + 1) & (n - 1);
        t[i] = (uint32_t)k + 1;
    }
    free(l->ptab);
    l->ptab = t;
    l->ptab_size = n;
    return 0;
}

/* The process (host, pid), created on first sight; -1 over the cap. */
long gt_nlog_proc_get(struct gt_nlog *l, const char *host, int pid)
{
    long i = proc_lookup(l, host, pid);
    if (i >= 0)
        return i;
    if (l->nproc >= GT_NLOG_MAX_PROCS)
        return -1;
    if ((l->nproc + 1) * 2 > l->ptab_size && ptab_grow(l))
        return -1;
    if (l->nproc == l->cap_proc) {
        size_t n = l->cap_proc ? l->cap_proc * 2 : 16;
        struct gt_nlog_proc *q = realloc(l->procs, n * sizeof(*q));
        if (!q)
            return -1;
        l->procs = q;
        l->cap_proc = n;
    }
    struct gt_nlog_proc *p = &l->procs[l->nproc];
    memset(p, 0, sizeof(*p));
    gt_nlog_copy(p->host, sizeof(p->host), host, short_len(host));
    p->pid = pid;
    p->first_comm = -1;
    p->phase_first = p->phase_last = -1;
    p->unattr_ch = -1;
    p->pend_gdr = -1;
    size_t k = proc_hash(p->host, strlen(p->host), pid) & (l->ptab_size - 1);
    while (l->ptab[k])
        k = (k + 1) & (l->ptab_size - 1);
    l->ptab[k] = (uint32_t)l->nproc + 1;
    return (long)l->nproc++;
}

struct gt_nlog_comm *gt_nlog_comm_new(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (l->ncomm >= GT_NLOG_MAX_COMMS || p->ncomm >= GT_NLOG_MAX_PROC_COMMS) {
        l->dropped++;
        return NULL;
    }
    if (l->ncomm == l->cap_comm) {
        size_t n = l->cap_comm ? l->cap_comm * 2 : 16;
        struct gt_nlog_comm *q = realloc(l->comms, n * sizeof(*q));
        if (!q) {
            l->dropped++;
            return NULL;
        }
        l->comms = q;
        l->cap_comm = n;
    }
    struct gt_nlog_comm *c = &l->comms[l->ncomm];
    memset(c, 0, sizeof(*c));
    c->proc = (uint32_t)pi;
    c->prev = p->first_comm;
    c->parent = -1;
    c->tid = tid;
    c->seq = p->nseq++;
    c->rank = c->nranks = c->cuda_dev = c->nvml_dev = c->nnodes = -1;
    p->first_comm = (int32_t)l->ncomm++;
    p->ncomm++;
    return c;
}

/* The process's latest record of pointer ptr not destroyed (NCCL may reuse an
 * address after a destroy). */
struct gt_nlog_comm *gt_nlog_comm_by_ptr(struct gt_nlog *l, long pi, uint64_t ptr)
{
    for (int32_t i = l->procs[pi].first_comm; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].ptr == ptr && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

/* The same among the records older than c. */
struct gt_nlog_comm *gt_nlog_comm_by_ptr_before(struct gt_nlog *l, uint64_t ptr,
                                                const struct gt_nlog_comm *c)
{
    for (int32_t i = c->prev; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].ptr == ptr && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

struct gt_nlog_comm *gt_nlog_comm_open_on(struct gt_nlog *l, long pi, int tid)
{
    for (int32_t i = l->procs[pi].first_comm; i >= 0; i = l->comms[i].prev)
        if (l->comms[i].open && l->comms[i].tid == tid && !l->comms[i].destroyed)
            return &l->comms[i];
    return NULL;
}

/* ---- connection phases (invariant 4) ----------------------------------- */

/* Ends the open phase of thread tid, if it is the process's latest. */
void gt_nlog_phase_close(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (p->phase_last >= 0 && l->phases[p->phase_last].tid == tid)
        l->phases[p->phase_last].closed = 1;
}

/* The phase a channel line of thread tid joins: the process's latest if it
 * is open and of that thread, else a new one; NULL over a cap. */
struct gt_nlog_phase *gt_nlog_phase_of(struct gt_nlog *l, long pi, int tid)
{
    struct gt_nlog_proc *p = &l->procs[pi];
    if (p->phase_last >= 0) {
        struct gt_nlog_phase *h = &l->phases[p->phase_last];
        if (!h->closed && h->tid == tid)
            return h;
        h->closed = 1; /* a line of another thread: that phase cannot go on */
    }
    if (p->phase_dropped || p->nphase >= GT_NLOG_MAX_PHASES ||
        l->nphase >= GT_NLOG_MAX_ALL_PHASES) {
        /* a phase missing would shift every later one: none is kept after */
        if (!p->phase_dropped)
            l->dropped++;
        p->phase_dropped++;
        return NULL;
    }
    if (l->nphase == l->cap_phase) {
        size_t n = l->cap_phase ? l->cap_phase * 2 : 16;
        struct gt_nlog_phase *q = realloc(l->phases, n * sizeof(*q));
        if (!q) {
            l->dropped++;
            p->phase_dropped++;
            return NULL;
        }
        l->phases = q;
        l->cap_phase = n;
    }
    struct gt_nlog_phase *h = &l->phases[l->nphase];
    memset(h, 0, sizeof(*h));
    h->next = -1;
    h->tid = tid;
    h->rec = -1;
    if (p->phase_last >= 0)
        l->phases[p->phase_last].next = (int32_t)l->nphase;
    else
        p->phase_first = (int32_t)l->nphase;
    p->phase_last = (int32_t)l->nphase++;
    p->nphase++;
    return h;
}

/* ---- GPU Direct decisions, run against run ---------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gt_nlog_gdr_text(const struct gt_nlog *l, char *buf, size_t n)
{
    if (!n)
        return;
    buf[0] = 0;
    size_t total = 0;
    for (size_t i = 0; i < l->nproc; i++)
        total += l->procs[i].ngdr;
    char **v = malloc((total ? total : 1) * sizeof(*v));
    char(*t)[128] = malloc((total ? total : 1) * sizeof(*t));
    if (!v || !t) {
        snprintf(buf, n, "(out of memory)");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < l->nproc; i++)
        for (uint32_t g = 0; g < l->procs[i].ngdr; g++) {
            const struct gt_nlog_gdr *d = &l->procs[i].gdr[g];
            if (d->kind)
                snprintf(t[k], sizeof(t[k]), "NET/%s HCA %s: %s", d->gpu, d->hca,
                         d->enabled ? "Enabled" : "Disabled");
            else
                snprintf(t[k], sizeof(t[k]), "GPU %s / HCA %s: %s (distance %d %s %d)", d->gpu,
                         d->hca, d->enabled ? "Enabled" : "Disabled", d->distance,
                         d->enabled ? "<=" : ">", d->level);
            v[k] = t[k];
            k++;
        }
    if (k > 1)
        qsort(v, k, sizeof(*v), str_cmp);
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (i && !strcmp(v[i], v[i - 1]))
            continue;
        w += (size_t)snprintf(buf + (w < n ? w : n - 1), w < n ? n - w : 1, "%s%s", w ? "; " : "",
                              v[i]);
    }
    if (!k)
        snprintf(buf, n, "none");
out:
    free(v);
    free(t);
}

/* ---- the log -------------------------------------------------------------- */

int gt_nlog_init(struct gt_nlog *l)
{
    memset(l, 0, sizeof(*l));
    l->line = malloc(GT_NLOG_LINE_MAX + 1);
    return l->line ? 0 : ENOMEM;
}

void gt_nlog_free(struct gt_nlog *l)
{
    free(l->procs);
    free(l->comms);
    free(l->phases);
    free(l->ptab);
    free(l->line);
    memset(l, 0, sizeof(*l));
}
