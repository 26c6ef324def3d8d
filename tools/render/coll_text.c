/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll_text.c — the collective model (tools/lib/coll.h) as text: summary's
 * "== collectives" tables and verdict's evidence line.  Invariants: nothing
 * when no recorder had the status section (older runs print as before);
 * every line keeps within GT_REPORT_COLS.
 */
#include "tools/render/coll_text.h"

#include <stdlib.h>
#include <string.h>

#include "common/hist.h"
#include "tools/lib/esc.h"
#include "tools/lib/model.h"
#include "tools/render/text.h"

static void size_text(unsigned size_log2, char *buf, size_t n)
{
    if (size_log2 == GTR_COLL_SIZE_ANY) {
        snprintf(buf, n, "other");
        return;
    }
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = size_log2 / 10;
    snprintf(buf, n, "%llu %s", 1ull << (size_log2 - 10 * u), units[u < 7 ? u : 6]);
}

static int cell_cmp(const void *a, const void *b)
{
    const struct gt_coll_mcell *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    return x->size_log2 < y->size_log2 ? -1 : x->size_log2 > y->size_log2;
}

static void ranks_text(const struct gt_coll_mcomm *c, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!c->nranks_kept) {
        snprintf(buf, n, "rank ?");
        return;
    }
    gt_appendf(buf, n, "rank%s ", c->nranks_kept > 1 ? "s" : "");
    for (int k = 0; k < c->nranks_kept && k < 8; k++)
        gt_appendf(buf, n, "%s%d", k ? "," : "", c->ranks[k]);
    if (c->nranks_kept > 8 || c->nprocs > c->nranks_kept)
        gt_appendf(buf, n, ",… (%d processes)", c->nprocs);
    if (c->nranks > 0)
        gt_appendf(buf, n, " of %d", c->nranks);
    if (c->nnodes > 0)
        gt_appendf(buf, n, " on %d node%s", c->nnodes, c->nnodes == 1 ? "" : "s");
}

/* A communicator's two head lines: label, name, ranks, profiler; its times. */
static void coll_comm_head(FILE *f, const struct gt_coll_mcomm *c)
{
    char lab[48], rk[160], t1[24], t2[24];
    gt_coll_comm_label(c, lab, sizeof(lab));
    ranks_text(c, rk, sizeof(rk));
    fprintf(f, "   comm %s%s%s%s  %s  profiler v%d, mode %s\n", lab, c->name[0] ? " \"" : "",
            c->name[0] ? gt_esc(c->name) : "", c->name[0] ? "\"" : "", rk, c->version,
            gt_coll_mode_name(c->mode));
    char line[256] = "";
    if (c->netinit_max_ns >= 0)
        gt_appendf(line, sizeof(line), "net init -> profiler init %s; ",
                   gt_fmt_ns((uint64_t)c->netinit_max_ns, t1, sizeof(t1)));
    if (c->first_max_ns >= 0)
        gt_appendf(line, sizeof(line), "to first operation %s; ",
                   gt_fmt_ns((uint64_t)c->first_max_ns, t2, sizeof(t2)));
    gt_appendf(line, sizeof(line), "busy %s (all ranks)", gt_fmt_ns(c->busy_ns, t1, sizeof(t1)));
    if (c->inflight_full)
        gt_appendf(line, sizeof(line), "; %llu not timed (in-flight table full)",
                   (unsigned long long)c->inflight_full);
    if (c->stale_child)
        gt_appendf(line, sizeof(line),
                   "; %llu late child event(s) ignored (their operation's slot was reused)",
                   (unsigned long long)c->stale_child);
    fprintf(f, "     %s\n", line);
}

/* One row per cell (function x size), cs sorted by function then size. */
static void coll_table(FILE *f, const struct gt_coll_mcomm *c, const struct gt_coll_mcell *cs)
{
    fprintf(f, "     %-13s %8s %9s %9s %9s %9s %8s  %s\n", "function", "size", "count", "p50",
            "p95", "p99", "busbw", "algo_proto");
    for (size_t k = 0; k < c->ncell; k++) {
        const struct gt_coll_mcell *x = &cs[k];
        const struct gtr_hist *h = &x->hist;
        char sz[16], p50[16], p95[16], p99[16], bw[16], ap[40];
        size_text(x->size_log2, sz, sizeof(sz));
        if (h->count) {
            gt_fmt_ns(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 50), p50, sizeof(p50));
            gt_fmt_ns(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 95), p95, sizeof(p95));
            gt_fmt_ns(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 99), p99, sizeof(p99));
        } else {
            snprintf(p50, sizeof(p50), "-");
            snprintf(p95, sizeof(p95), "-");
            snprintf(p99, sizeof(p99), "-");
        }
        double alg, bus;
        gt_coll_bw(c, x, &alg, &bus);
        if (bus > 0)
            snprintf(bw, sizeof(bw), "%.2f", bus);
        else
            snprintf(bw, sizeof(bw), "-");
        gt_coll_algo_proto(x, ap, sizeof(ap));
        fprintf(f, "     %-13s %8s %9llu %9s %9s %9s %8s  %s", gt_coll_func_name(x->func), sz,
                (unsigned long long)x->count, p50, p95, p99, bw, ap);
        if (h->count < x->count)
            fprintf(f, " (%llu not timed)", (unsigned long long)(x->count - h->count));
        fputc('\n', f);
    }
}

/* One latency histogram per function, all sizes together (cs sorted). */
static void coll_bars(FILE *f, const struct gt_coll_mcomm *c, const struct gt_coll_mcell *cs)
{
    for (size_t k = 0; k < c->ncell;) {
        struct gtr_hist hh;
        gt_hist_init(&hh);
        size_t e = k;
        for (; e < c->ncell && cs[e].func == cs[k].func; e++) {
            const struct gtr_hist *h = &cs[e].hist;
            hh.count += h->count;
            hh.sum_ns += h->sum_ns;
            for (unsigned b = 0; b < GTR_HIST_BUCKETS; b++)
                hh.buckets[b] += h->buckets[b];
            if (h->min_ns < hh.min_ns)
                hh.min_ns = h->min_ns;
            if (h->max_ns > hh.max_ns)
                hh.max_ns = h->max_ns;
        }
        if (hh.count) {
            fprintf(f, "     %s latency, all sizes (%llu timed)\n", gt_coll_func_name(cs[k].func),
                    (unsigned long long)hh.count);
            gt_report_hist_bars(f, &hh, "       ", 40);
        }
        k = e;
    }
}

void gt_coll_text(FILE *f, const struct gt_coll_model *m, int bars)
{
    if (!m)
        return;
    fprintf(f,
            "\n== collectives (NCCL's profiler interface): %zu communicator(s) in %d of %d "
            "process(es)\n",
            m->ncomm, m->nwith, m->nstatus);
    for (size_t i = 0; i < m->ncomm; i++) {
        const struct gt_coll_mcomm *c = &m->comms[i];
        coll_comm_head(f, c);
        if (!c->ncell) {
            fprintf(f, "     no operation recorded\n");
            continue;
        }
        struct gt_coll_mcell *cs = malloc(c->ncell * sizeof(*cs));
        if (!cs)
            continue;
        memcpy(cs, c->cells, c->ncell * sizeof(*cs));
        qsort(cs, c->ncell, sizeof(*cs), cell_cmp);
        coll_table(f, c, cs);
        if (bars)
            coll_bars(f, c, cs);
        free(cs);
    }
    for (int k = 0; k < m->nabsent; k++) {
        char line[512];
        snprintf(line, sizeof(line), "collective metrics absent in %d process(es) (e.g. %s): %s",
                 m->absent[k].n, m->absent[k].example, m->absent[k].why);
        fputs("   ", f);
        gt_report_wrap(f, 3, 5, gt_esc(line));
    }
}

void gt_coll_evidence(const struct gt_coll_model *m, uint64_t comm_id, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!m)
        return;
    const struct gt_coll_mcomm *c = gt_coll_find(m, comm_id);
    if (!c) {
        if (m->nabsent)
            snprintf(buf, n, "collective metrics absent: %s", m->absent[0].why);
        else
            snprintf(buf, n, "no collective metrics for this communicator");
        return;
    }
    char rk[160];
    ranks_text(c, rk, sizeof(rk));
    snprintf(buf, n, "NCCL: %s", rk);
    /* the busiest function: the most operations */
    const struct gt_coll_mcell *best = NULL;
    uint64_t bc = 0;
    for (int f = 0; f < GTR_COLL_FUNC_COUNT; f++) {
        uint64_t cnt = 0;
        const struct gt_coll_mcell *big = NULL;
        for (size_t k = 0; k < c->ncell; k++)
            if (c->cells[k].func == f) {
                cnt += c->cells[k].count;
                if (!big || c->cells[k].hist.count > big->hist.count)
                    big = &c->cells[k];
            }
        if (cnt > bc) {
            bc = cnt;
            best = big;
        }
    }
    if (best && best->hist.count) {
        char sz[16], p[16];
        size_text(best->size_log2, sz, sizeof(sz));
        gt_appendf(buf, n, "; %s x%llu, p50 %s at %s", gt_coll_func_name(best->func),
                   (unsigned long long)bc,
                   gt_fmt_ns(gt_hist_percentile(best->hist.buckets, best->hist.min_ns,
                                                best->hist.max_ns, 50),
                             p, sizeof(p)),
                   sz);
    }
}
