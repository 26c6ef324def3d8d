/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostp.c — host pressure from the recorders' host sections (hostp.h says
 * what each figure is).  Invariant: a recorder without the section changes
 * nothing but nproc_without, so a run of older recorders prints as before.
 */
#include "tools/lib/hostp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void gt_spread_add(struct gt_spread *s, double x)
{
    s->n += 1;
    double d = x - s->mean;
    s->mean += d / s->n;
    s->m2 += d * (x - s->mean);
}

double gt_spread_sd(const struct gt_spread *s)
{
    return s->n >= 2 ? sqrt(s->m2 / (s->n - 1)) : 0.0;
}

void gt_hostp_clear(struct gt_hostp *h)
{
    memset(h, 0, sizeof(*h));
}

static double sub_s(uint64_t a, uint64_t b)
{
    return a > b ? (double)(a - b) / 1e9 : 0.0;
}

void gt_hostp_add(struct gt_hostp *h, const struct gt_recfile *r, uint64_t bytes)
{
    if (!r->has_host) {
        h->nproc_without++;
        return;
    }
    const struct gtr_host *x = r->host;
    h->nproc++;
    double user = sub_s(x->utime_ns, x->utime_at_open_ns);
    double sys = sub_s(x->stime_ns, x->stime_at_open_ns);
    double thr = 0;
    for (uint32_t i = 0; i < x->nthreads && i < GTR_HOST_THREADS; i++)
        if (x->threads[i].tid)
            thr += sub_s(x->threads[i].cpu_ns, x->threads[i].cpu_first_ns);
    h->user_s += user;
    h->sys_s += sys;
    h->cpu_s += user + sys;
    h->cpu_total_s += (double)(x->utime_ns + x->stime_ns) / 1e9;
    h->thread_s += thr;
    double helper = 0;
    if (x->helper_count) {
        helper = (double)(x->helper_utime_ns + x->helper_stime_ns) / 1e9;
        h->helper_s += helper;
        h->nhelper++;
    }
    if (x->last_mono_ns > x->first_mono_ns)
        h->window_s += (double)(x->last_mono_ns - x->first_mono_ns) / 1e9;
    h->bytes += bytes;
    h->staging_hwm += x->staging_hwm_bytes;
    h->staging_now += x->staging_bytes;
    h->staging_total += x->staging_total_bytes;
    h->rss_hwm += x->rss_hwm_bytes;
    h->locked_hwm += x->locked_hwm_bytes;
    h->pinned_hwm += x->pinned_hwm_bytes;
    h->threads += x->nthreads;
    h->untracked += x->threads_untracked;
    h->samples += x->samples;
    h->sample_cost_s += (double)x->sample_cost_ns / 1e9;
    h->flags |= (int)x->flags;
    if (bytes && user + sys + helper > 0)
        gt_spread_add(&h->per_gb, (user + sys + helper) / ((double)bytes / 1e9));
    if (user + sys > 0)
        gt_spread_add(&h->share, thr / (user + sys));
}

double gt_hostp_cpu_per_gb(const struct gt_hostp *h)
{
    if (!h->nproc || !h->bytes)
        return -1;
    return (h->cpu_s + h->helper_s) / ((double)h->bytes / 1e9);
}

double gt_hostp_share(const struct gt_hostp *h)
{
    if (!h->nproc || h->cpu_s <= 0)
        return -1;
    double s = h->thread_s / h->cpu_s;
    return s > 1 ? 1 : s;
}

uint64_t gt_hostp_rec_bytes(const struct gt_job *j, size_t rec)
{
    uint64_t b = 0;
    for (size_t i = 0; i < j->nranks; i++)
        if (j->ranks[i].rec == rec)
            b += j->ranks[i].bytes;
    return b;
}

/* bytes of every recorder in one pass (the digests are in rec order, but
 * nothing here relies on it) */
static uint64_t *all_bytes(const struct gt_job *j)
{
    uint64_t *b = calloc(j->nrec ? j->nrec : 1, sizeof(*b));
    if (!b)
        return NULL;
    for (size_t i = 0; i < j->nranks; i++)
        if (j->ranks[i].rec < j->nrec)
            b[j->ranks[i].rec] += j->ranks[i].bytes;
    return b;
}

void gt_hostp_of_job(const struct gt_job *j, struct gt_hostp *h)
{
    gt_hostp_clear(h);
    uint64_t *b = all_bytes(j);
    for (size_t i = 0; i < j->nrec; i++)
        gt_hostp_add(h, &j->recs[i], b ? b[i] : gt_hostp_rec_bytes(j, i));
    free(b);
}

void gt_hostp_of_comm(const struct gt_job *j, size_t ci, struct gt_hostp *h)
{
    gt_hostp_clear(h);
    const struct gt_ccomm *c = &j->comms[ci];
    size_t last = SIZE_MAX;
    for (size_t k = 0; k < c->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[c->rix + k]];
        if (d->rec == last || d->rec >= j->nrec)
            continue; /* one process once (its digests of this comm are adjacent) */
        last = d->rec;
        /* the process's bytes on every communicator: its CPU is the process's */
        gt_hostp_add(h, &j->recs[d->rec], gt_hostp_rec_bytes(j, d->rec));
    }
}

void gt_hostp_of_node(const struct gt_job *j, const char *host, struct gt_hostp *h)
{
    gt_hostp_clear(h);
    for (size_t i = 0; i < j->nrec; i++)
        if (!strncmp(j->recs[i].id.host, host, sizeof(j->recs[i].id.host)))
            gt_hostp_add(h, &j->recs[i], gt_hostp_rec_bytes(j, i));
}

int gt_hostp_recorded(const struct gt_job *j)
{
    for (size_t i = 0; i < j->nrec; i++)
        if (j->recs[i].has_host)
            return 1;
    return 0;
}
