/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_coll.c — the report's collective section (html_coll.h): the model
 * of tools/lib/coll.h as a table per communicator, and per function a bar per
 * power of two of the merged durations (the histogram's 16 sub-buckets of
 * an octave summed), scaled to the function's largest bar.
 */
#include "tools/render/html_coll.h"

#include <string.h>

#include "common/hist.h"
#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/render/html.h"

static unsigned octave_of(unsigned bucket)
{
    uint64_t lo = gt_hist_bucket_lo(bucket);
    return lo ? 63 - (unsigned)__builtin_clzll(lo) : 0;
}

static void octaves(const struct gt_coll_mcomm *c, int func, double oct[64])
{
    memset(oct, 0, 64 * sizeof(*oct));
    for (size_t k = 0; k < c->ncell; k++) {
        if (c->cells[k].func != func)
            continue;
        for (unsigned b = 0; b < GTR_HIST_BUCKETS; b++)
            oct[octave_of(b)] += (double)c->cells[k].hist.buckets[b];
    }
}

/* One SVG of bars, a row per power of two from the lowest to the highest
 * non-empty one, a bar per run (1 or 2) scaled to the largest value of
 * all runs, labelled on the right with the counts (one run) or the two
 * shares in percent (two runs).  Nothing is written when every value is 0. */
static void octave_bars(FILE *f, const char *aria, int nrun, const double v[][64])
{
    static const char *const run_class[2][2] = {{"run-1", NULL}, {"run-a", "run-b"}};
    double max = 0;
    int lo = 64, hi = -1;
    for (int i = 0; i < 64; i++)
        for (int r = 0; r < nrun; r++)
            if (v[r][i] > 0) {
                lo = i < lo ? i : lo;
                hi = i > hi ? i : hi;
                max = v[r][i] > max ? v[r][i] : max;
            }
    if (hi < 0)
        return;
    /* Two runs get taller rows, each holding two thinner bars. */
    const double lw = 170, bw = 360, rh = nrun == 1 ? 16 : 22, bh = nrun == 1 ? 12 : 9;
    const double ty = nrun == 1 ? 10 : 13;
    fprintf(f,
            "<div class=\"scroll\"><svg class=\"hostbars\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"%s\">\n",
            lw + bw + (nrun == 1 ? 90 : 110), 6 + rh * (hi - lo + 1), aria);
    for (int i = lo; i <= hi; i++) {
        char a[24], b[24];
        double y = 4 + rh * (i - lo);
        fprintf(f, "<text x=\"0\" y=\"%.1f\">%s .. %s</text>", y + ty,
                gt_fmt_ns(1ull << i, a, sizeof(a)), gt_fmt_ns(2ull << i, b, sizeof(b)));
        for (int r = 0; r < nrun; r++) {
            double w = bw * v[r][i] / max;
            if (v[r][i] > 0)
                fprintf(f,
                        "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.0f\"/>",
                        run_class[nrun - 1][r], lw, y + 10 * r, w < 0.5 ? 0.5 : w, bh);
        }
        if (nrun == 1)
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%.0f</text>\n", lw + bw + 8, y + ty, v[0][i]);
        else
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%.1f%% / %.1f%%</text>\n", lw + bw + 8, y + ty,
                    100 * v[0][i], 100 * v[1][i]);
    }
    fputs("</svg></div>\n", f);
}

static void histogram(FILE *f, const struct gt_coll_mcomm *c, int func)
{
    double oct[1][64];
    octaves(c, func, oct[0]);
    int any = 0;
    for (int i = 0; i < 64; i++)
        any |= oct[0][i] > 0;
    if (!any)
        return;
    fputs("<h4>", f);
    gt_html_escape(f, gt_coll_func_name(func), 0);
    fputs(" latency, all sizes</h4>\n", f);
    octave_bars(f, "latency histogram", 1, oct);
}

void gt_html_coll_section(FILE *f, const struct gt_job *j)
{
    const struct gt_coll_model *m = j->coll;
    if (!m)
        return;
    fputs("<section class=\"coll\">\n<h2>Collectives</h2>\n<p class=\"meta\">What NCCL's "
          "profiler interface reported (format 1.6 recorders; docs/collectives.md): per "
          "communicator NCCL's ranks, each function and message size with its count, latency "
          "quantiles and bus bandwidth, and a latency histogram per function.</p>\n",
          f);
    for (size_t i = 0; i < m->ncomm; i++) {
        const struct gt_coll_mcomm *c = &m->comms[i];
        char t[64];
        snprintf(t, sizeof(t), "0x%llx", (unsigned long long)c->comm_id);
        fputs("<h3>comm ", f);
        gt_html_escape(f, t, 0);
        if (c->name[0]) {
            fputs(" &quot;", f);
            gt_html_escape(f, c->name, 64);
            fputs("&quot;", f);
        }
        fprintf(f, " &middot; %d rank(s) seen of %d, %d node(s)</h3>\n", c->nranks_kept, c->nranks,
                c->nnodes);
        fputs("<table><tr><th>function</th><th>size</th><th>count</th><th>p50</th><th>p95</th>"
              "<th>p99</th><th>busbw GB/s</th><th>algo_proto</th></tr>\n",
              f);
        for (size_t k = 0; k < c->ncell; k++) {
            const struct gt_coll_mcell *x = &c->cells[k];
            const struct gtr_hist *h = &x->hist;
            char sz[32], p[3][24], ap[40];
            gt_coll_size_label(x->size_log2, sz, sizeof(sz));
            static const double q[3] = {50, 95, 99};
            for (int r = 0; r < 3; r++)
                if (h->count)
                    gt_fmt_ns(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, q[r]), p[r],
                              sizeof(p[r]));
                else
                    snprintf(p[r], sizeof(p[r]), "-");
            double alg, bus;
            gt_coll_bw(c, x, &alg, &bus);
            gt_coll_algo_proto(x, ap, sizeof(ap));
            fputs("<tr><td>", f);
            gt_html_escape(f, gt_coll_func_name(x->func), 0);
            fputs("</td><td>", f);
            gt_html_escape(f, sz, 0);
            fprintf(f, "</td><td>%llu</td><td>%s</td><td>%s</td><td>%s</td><td>%.2f</td><td>",
                    (unsigned long long)x->count, p[0], p[1], p[2], bus);
            gt_html_escape(f, ap, 0);
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
        for (int fn = 0; fn < GTR_COLL_FUNC_COUNT; fn++)
            histogram(f, c, fn);
    }
    for (int k = 0; k < m->nabsent; k++) {
        fprintf(f,
                "<p class=\"meta\">Collective metrics absent in %d process(es): ", m->absent[k].n);
        gt_html_escape(f, m->absent[k].why, 0);
        fputs("</p>\n", f);
    }
    fputs("</section>\n", f);
}

/* Function `func` of every communicator of model m merged into one
 * histogram (buckets summed, min and max kept). */
static void merged(const struct gt_coll_model *m, int func, struct gtr_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
    for (size_t i = 0; m && i < m->ncomm; i++)
        for (size_t k = 0; k < m->comms[i].ncell; k++) {
            const struct gt_coll_mcell *x = &m->comms[i].cells[k];
            if (x->func == func && x->hist.count)
                gt_hist_merge(h, &x->hist);
        }
}

static void run_legend(FILE *f, const char *run, const struct gtr_hist *h)
{
    if (!h->count) {
        fprintf(f, "<li>%s: none timed</li>", run);
        return;
    }
    char p[3][24];
    static const double q[3] = {50, 95, 99};
    for (int r = 0; r < 3; r++)
        gt_fmt_ns(gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, q[r]), p[r], sizeof(p[r]));
    fprintf(f, "<li>%s: p50 %s, p95 %s, p99 %s, %llu timed</li>", run, p[0], p[1], p[2],
            (unsigned long long)h->count);
}

static void overlay(FILE *f, int func, const struct gtr_hist *ha, const struct gtr_hist *hb)
{
    double share[2][64] = {{0}};
    const struct gtr_hist *h[2] = {ha, hb};
    for (int r = 0; r < 2; r++)
        for (unsigned b = 0; h[r]->count && b < GTR_HIST_BUCKETS; b++)
            share[r][octave_of(b)] += (double)h[r]->buckets[b] / (double)h[r]->count;
    fputs("<h4>", f);
    gt_html_escape(f, gt_coll_func_name(func), 0);
    fputs(" latency, A against B</h4>\n<ul class=\"meta\">", f);
    run_legend(f, "A (baseline)", ha);
    run_legend(f, "B", hb);
    fputs("</ul>\n", f);
    octave_bars(f, "latency overlay", 2, share);
}

void gt_html_coll_overlay(FILE *f, const struct gt_job *a, const struct gt_job *b)
{
    if (!a->coll && !b->coll)
        return;
    fputs("<section class=\"coll-ab\">\n<h2>Collective latency, A against B</h2>\n<p "
          "class=\"meta\">Each run's collectives of one function, every communicator "
          "merged; a bar is the run's share of its timed operations in that range (blue A, "
          "orange B), so runs of different lengths compare.</p>\n",
          f);
    for (int r = 0; r < 2; r++)
        if (!(r ? b : a)->coll)
            fprintf(f,
                    "<p class=\"meta\">Run %s has no collective metrics (recorders older than "
                    "format 1.6, or NCCL's profiler not loaded).</p>\n",
                    r ? "B" : "A");
    for (int fn = 0; fn < GTR_COLL_FUNC_COUNT; fn++) {
        struct gtr_hist ha, hb;
        merged(a->coll, fn, &ha);
        merged(b->coll, fn, &hb);
        if (ha.count || hb.count)
            overlay(f, fn, &ha, &hb);
    }
    fputs("</section>\n", f);
}
