/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll.c — the collective model (contract in coll.h); its renderers are
 * tools/render/coll_text.c and tools/render/json_coll.c.
 *
 * Invariants: every value read from a recorder was bounded by the
 * validator (tools/lib/recfile.c: functions, size buckets, strings); sums
 * saturate rather than wrap.
 */
#include "tools/lib/coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/hist.h"
#include "tools/lib/esc.h"
#include "tools/lib/model.h"

static const char *const func_names[GTR_COLL_FUNC_COUNT] = {
    "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",   "AlltoAll",
    "Gather",    "Scatter",   "Send",          "Recv",      "SendRecv", "other"};
static const char *const algo_names[GTR_COLL_ALGOS] = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT", "unknown"};
static const char *const proto_names[GTR_COLL_PROTOS] = {"LL", "LL128", "SIMPLE", "unknown"};

const char *gt_coll_func_name(int f)
{
    return f >= 0 && f < GTR_COLL_FUNC_COUNT ? func_names[f] : "other";
}

const char *gt_coll_algo_name(int a)
{
    return a >= 0 && a < GTR_COLL_ALGOS ? algo_names[a] : "unknown";
}

const char *gt_coll_proto_name(int p)
{
    return p >= 0 && p < GTR_COLL_PROTOS ? proto_names[p] : "unknown";
}

const char *gt_coll_mode_name(int m)
{
    return m == GTR_COLL_MODE_PROXY ? "proxy" : m == GTR_COLL_MODE_KERNEL ? "kernel" : "off";
}

double gt_coll_busbw_factor(int f, int n)
{
    if (n <= 0)
        return 1.0; /* nRanks unknown (profiler v1-v3): algorithm bandwidth */
    switch (f) {
    case GTR_COLL_FUNC_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case GTR_COLL_FUNC_ALLGATHER:
    case GTR_COLL_FUNC_REDUCESCATTER:
    case GTR_COLL_FUNC_ALLTOALL:
    case GTR_COLL_FUNC_GATHER:
    case GTR_COLL_FUNC_SCATTER:
        return (double)(n - 1) / n; /* nccl-tests' alltoall, gather, scatter */
    default:
        return 1.0;
    }
}

static uint64_t sadd(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

void gt_coll_bw(const struct gt_coll_mcomm *c, const struct gt_coll_mcell *x, double *algbw,
                double *busbw)
{
    *algbw = *busbw = 0;
    if (!x->hist.count || !x->hist.sum_ns || x->count == x->unsized)
        return;
    /* bytes of the timed operations: the cell's mean message times how many
     * were timed */
    double mean_bytes = (double)x->bytes / (double)(x->count - x->unsized);
    *algbw = mean_bytes * (double)x->hist.count / (double)x->hist.sum_ns; /* B/ns = GB/s */
    *busbw = *algbw * gt_coll_busbw_factor(x->func, c->nranks);
}

void gt_coll_algo_proto(const struct gt_coll_mcell *x, char *buf, size_t n)
{
    uint64_t best = 0;
    int ba = GTR_ALGO_UNKNOWN, bp = GTR_PROTO_UNKNOWN;
    for (int a = 0; a < GTR_COLL_ALGOS; a++)
        for (int p = 0; p < GTR_COLL_PROTOS; p++)
            if (x->algo_proto[a][p] > best) {
                best = x->algo_proto[a][p];
                ba = a;
                bp = p;
            }
    snprintf(buf, n, "%s_%s", algo_names[ba], proto_names[bp]);
}

void gt_coll_size_label(unsigned size_log2, char *buf, size_t n)
{
    if (size_log2 == GTR_COLL_SIZE_ANY) {
        snprintf(buf, n, "any");
        return;
    }
    /* NCCL Inspector's label of a size: its value in the largest unit it
     * reaches (B, KB … TB, powers of 1024), floor, then "-" floor+1 */
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    unsigned u = size_log2 / 10 < 4 ? size_log2 / 10 : 4;
    double v = ldexp(1.0, (int)size_log2 - 10 * (int)u);
    snprintf(buf, n, "%.0f-%.0f%s", floor(v), floor(v) + 1, units[u]);
}

/* ---- fold ---- */

void gt_coll_absent_why(const struct gt_recfile *r, char *buf, size_t n)
{
    const struct gtr_coll_status *st = r->coll_status; /* gt_coll_fold: not NULL */
    const char *env = st->profiler_env;
    if (st->mode == GTR_COLL_MODE_OFF && st->inits)
        snprintf(buf, n, "GDRTRACE_COLL=off: the profiler asked NCCL for no events");
    else if (st->profiler_env_set && !strcasecmp(env, "none"))
        snprintf(buf, n, "NCCL_PROFILER_PLUGIN=none: NCCL loads no profiler");
    else if (st->profiler_env_set && *env && !strstr(env, "gdrtrace"))
        snprintf(buf, n,
                 "NCCL_PROFILER_PLUGIN=%s: NCCL loaded that profiler, and gdrtrace's is not "
                 "taken in its place",
                 env);
    else if (st->full)
        snprintf(buf, n,
                 "the recorder's collective entries were all taken (%u communicator(s) "
                 "not recorded)",
                 st->full);
    else if (!st->inits && r->id.nccl_version > 0 && r->id.nccl_version < 22803 &&
             !st->profiler_env_set)
        snprintf(buf, n,
                 "NCCL %d.%d.%d loads a profiler only when NCCL_PROFILER_PLUGIN names it (from "
                 "2.28.3 it takes the net plugin's); `gdrtrace run` sets it",
                 r->id.nccl_version / 10000, r->id.nccl_version / 100 % 100,
                 r->id.nccl_version % 100);
    else if (!st->inits)
        snprintf(buf, n, "NCCL never initialised gdrtrace's profiler in this process");
    else
        snprintf(buf, n, "the profiler was initialised but recorded no communicator");
}

static struct gt_coll_mcomm *mcomm(struct gt_coll_model *m, const struct gtr_coll_comm *c)
{
    for (size_t i = 0; i < m->ncomm; i++)
        if (c->has_comm_id == 1 && m->comms[i].has_id && m->comms[i].comm_id == c->comm_id)
            return &m->comms[i];
    if (m->ncomm == m->cap) {
        size_t nc = m->cap ? 2 * m->cap : 8;
        struct gt_coll_mcomm *p = realloc(m->comms, nc * sizeof(*p));
        if (!p)
            return NULL;
        m->comms = p;
        m->cap = nc;
    }
    struct gt_coll_mcomm *x = &m->comms[m->ncomm++];
    memset(x, 0, sizeof(*x));
    x->has_id = c->has_comm_id == 1;
    x->comm_id = c->comm_id;
    memcpy(x->name, c->comm_name, sizeof(x->name));
    x->name[sizeof(x->name) - 1] = '\0';
    x->nranks = c->nranks;
    x->nnodes = c->nnodes;
    x->version = c->version;
    x->mode = (int)c->mode;
    x->first_max_ns = -1;
    x->netinit_max_ns = -1;
    return x;
}

static struct gt_coll_mcell *mcell(struct gt_coll_mcomm *x, unsigned func, unsigned log2)
{
    for (size_t i = 0; i < x->ncell; i++)
        if (x->cells[i].func == func && x->cells[i].size_log2 == log2)
            return &x->cells[i];
    if (x->ncell == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 8;
        struct gt_coll_mcell *p = realloc(x->cells, nc * sizeof(*p));
        if (!p)
            return NULL;
        x->cells = p;
        x->cap = nc;
    }
    struct gt_coll_mcell *y = &x->cells[x->ncell++];
    memset(y, 0, sizeof(*y));
    y->func = (uint8_t)func;
    y->size_log2 = (uint8_t)log2;
    gt_hist_init(&y->hist);
    return y;
}

static void add_rank(struct gt_coll_mcomm *x, int rank)
{
    int k = 0;
    while (k < x->nranks_kept && x->ranks[k] < rank)
        k++;
    if (k < x->nranks_kept && x->ranks[k] == rank)
        return;
    if (x->nranks_kept == GT_COLL_RANKS_KEPT) {
        if (k == GT_COLL_RANKS_KEPT)
            return; /* keep the lowest ones */
        x->nranks_kept--;
    }
    memmove(&x->ranks[k + 1], &x->ranks[k], (size_t)(x->nranks_kept - k) * sizeof(int));
    x->ranks[k] = rank;
    x->nranks_kept++;
}

static void add_absent(struct gt_coll_model *m, const struct gt_recfile *r)
{
    char why[256];
    gt_coll_absent_why(r, why, sizeof(why));
    int k = 0;
    while (k < m->nabsent && strcmp(m->absent[k].why, why))
        k++;
    if (k == m->nabsent) {
        if (m->nabsent == GT_COLL_WHYS)
            k = GT_COLL_WHYS - 1; /* counted with the last reason kept */
        else {
            m->nabsent++;
            snprintf(m->absent[k].why, sizeof(m->absent[k].why), "%s", why);
            snprintf(m->absent[k].example, sizeof(m->absent[k].example), "%s:%d", r->id.host,
                     r->id.pid);
        }
    }
    m->absent[k].n++;
}

int gt_coll_fold(struct gt_coll_model **mp, const struct gt_recfile *r)
{
    if (!r->coll_status)
        return 0;
    if (!*mp && !(*mp = calloc(1, sizeof(**mp))))
        return -1;
    struct gt_coll_model *m = *mp;
    m->nstatus++;
    int any = 0;
    for (uint32_t i = 0; i < r->ncoll; i++) {
        const struct gtr_coll_comm *c = &r->colls[i];
        if (c->state == GTR_COMM_FREE)
            continue;
        any = 1;
        struct gt_coll_mcomm *x = mcomm(m, c);
        if (!x) {
            m->oom = 1;
            return -1;
        }
        x->nprocs++;
        if (c->rank >= 0)
            add_rank(x, c->rank);
        if (c->first_ns > 0 && c->first_ns >= c->init_ns &&
            c->first_ns - c->init_ns > x->first_max_ns)
            x->first_max_ns = c->first_ns - c->init_ns;
        /* comms[] holds only the slots in use (nheld of ncomm). */
        for (uint32_t s = 0; c->has_comm_id == 1 && s < r->nheld; s++) {
            const struct gtr_comm *nc = &r->comms[s];
            if (nc->state != GTR_COMM_FREE && nc->has_comm_id == 1 && nc->comm_id == c->comm_id &&
                c->init_ns >= nc->init_ns && c->init_ns - nc->init_ns > x->netinit_max_ns) {
                x->netinit_max_ns = c->init_ns - nc->init_ns;
                break;
            }
        }
        x->busy_ns = sadd(x->busy_ns, c->busy_ns);
        x->inflight_full = sadd(x->inflight_full, c->inflight_full);
        x->foreign = sadd(x->foreign, c->foreign);
        x->stale_child = sadd(x->stale_child, c->stale_child);
        for (unsigned k = 0; k < GTR_COLL_CELLS; k++) {
            const struct gtr_coll_cell *s = &c->cells[k];
            if (s->in_use != 1)
                continue;
            struct gt_coll_mcell *y = mcell(x, s->func, s->size_log2);
            if (!y) {
                m->oom = 1;
                return -1;
            }
            y->count = sadd(y->count, s->count);
            y->bytes = sadd(y->bytes, s->bytes);
            y->unsized = sadd(y->unsized, s->unsized);
            for (int a = 0; a < GTR_COLL_ALGOS; a++)
                for (int p = 0; p < GTR_COLL_PROTOS; p++)
                    y->algo_proto[a][p] = sadd(y->algo_proto[a][p], s->algo_proto[a][p]);
            const struct gtr_hist *h = &s->hist;
            if (!h->count)
                continue;
            y->hist.count = sadd(y->hist.count, h->count);
            y->hist.sum_ns = sadd(y->hist.sum_ns, h->sum_ns);
            for (unsigned b = 0; b < GTR_HIST_BUCKETS; b++)
                y->hist.buckets[b] = sadd(y->hist.buckets[b], h->buckets[b]);
            if (h->min_ns < y->hist.min_ns)
                y->hist.min_ns = h->min_ns;
            if (h->max_ns > y->hist.max_ns)
                y->hist.max_ns = h->max_ns;
        }
    }
    if (any)
        m->nwith++;
    else
        add_absent(m, r);
    return 0;
}

void gt_coll_free(struct gt_coll_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->ncomm; i++)
        free(m->comms[i].cells);
    free(m->comms);
    free(m);
}

const struct gt_coll_mcomm *gt_coll_find(const struct gt_coll_model *m, uint64_t comm_id)
{
    for (size_t i = 0; m && i < m->ncomm; i++)
        if (m->comms[i].has_id && m->comms[i].comm_id == comm_id)
            return &m->comms[i];
    return NULL;
}

void gt_coll_comm_label(const struct gt_coll_mcomm *c, char *buf, size_t n)
{
    if (c->has_id)
        snprintf(buf, n, "0x%llx", (unsigned long long)c->comm_id);
    else
        snprintf(buf, n, "(commId not yet known)");
}
