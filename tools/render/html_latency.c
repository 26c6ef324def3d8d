/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_latency.c — `gdrtrace report`'s latency section: per operation, every
 * communicator's histogram summed and drawn as a density on a log axis (one
 * run, or A and B overlaid, each with p50 and p99 marked), with the
 * quantiles in a table beside it.  Keeps html.h's invariants: every string
 * from a recorder through gt_html_escape(), inline SVG only, deterministic.
 */
#include "tools/render/html_latency.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/hist.h"
#include "tools/render/html.h"

static const char *const op_what[GTR_OP_COUNT] = {
    "regMr / regMrDmaBuf: one registration", "deregMr: one deregistration",
    "isend until test() says done",          "irecv until test() says done",
    "iflush until test() says done",
};

static double lg(double v)
{
    return log2(v < 0.5 ? 0.5 : v);
}

/* Width in log2 units of bucket i, and where it starts. */
static void bucket_span(unsigned i, double *x0, double *x1)
{
    uint64_t lo = gt_hist_bucket_lo(i), hi = gt_hist_bucket_hi(i);
    if (hi == UINT64_MAX)
        hi = 2 * lo;
    *x0 = lg((double)lo);
    *x1 = lg((double)hi);
}

struct plot {
    double xmin, xmax, ymax;
    int px0, px1, py0, py1; /* plot area, px */
};

static double px_x(const struct plot *p, double x)
{
    return p->px0 + (x - p->xmin) / (p->xmax - p->xmin) * (p->px1 - p->px0);
}

static double px_y(const struct plot *p, double y)
{
    return p->py1 - (p->ymax > 0 ? y / p->ymax : 0) * (p->py1 - p->py0);
}

/* Share of the operations in bucket i per log2 unit: the area under a run's
 * curve is 1, whatever its count, so two runs overlay fairly. */
static double density(const struct gtr_hist *h, uint64_t total, unsigned i)
{
    double x0, x1;
    bucket_span(i, &x0, &x1);
    return total ? (double)h->buckets[i] / (double)total / (x1 - x0) : 0;
}

static void hist_path(FILE *f, const struct plot *p, const struct gtr_hist *h, const char *cls,
                      const char *run)
{
    uint64_t total = gt_hist_total(h);
    if (!total)
        return;
    unsigned first = GTR_HIST_BUCKETS, last = 0;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        if (h->buckets[i]) {
            if (first == GTR_HIST_BUCKETS)
                first = i;
            last = i;
        }
    double x0, x1;
    bucket_span(first, &x0, &x1);
    fprintf(f, "<path class=\"%s\" data-run=\"%s\" data-count=\"%llu\" d=\"M%.1f %.1f", cls, run,
            (unsigned long long)total, px_x(p, x0), px_y(p, 0));
    for (unsigned i = first; i <= last; i++) {
        bucket_span(i, &x0, &x1);
        double y = px_y(p, density(h, total, i));
        fprintf(f, "L%.1f %.1fL%.1f %.1f", px_x(p, x0), y, px_x(p, x1), y);
    }
    fprintf(f, "L%.1f %.1fZ\"/>\n", px_x(p, x1), px_y(p, 0));
}

static void mark(FILE *f, const struct plot *p, uint64_t v, const char *what, const char *colour,
                 int row)
{
    if (!v)
        return;
    double x = px_x(p, lg((double)v));
    char b[32];
    fprintf(f,
            "<line class=\"mark\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>"
            "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"%s\">%s %s</text>\n",
            x, p->py0, x, p->py1, colour, x + 2, p->py0 + 10 + 11 * row, colour, what,
            gt_fmt_ns(v, b, sizeof(b)));
}

static void stats_row(FILE *f, const char *run, const struct gtr_hist *h)
{
    char b[5][32];
    uint64_t total = gt_hist_total(h);
    fprintf(f, "<tr><td>%s</td><td class=\"num\">%llu</td>", run, (unsigned long long)total);
    if (!total) {
        fputs("<td colspan=\"5\">no operation recorded</td></tr>\n", f);
        return;
    }
    fprintf(f,
            "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
            "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
            gt_fmt_ns(gt_hist_quantile(h, 0.50), b[0], sizeof(b[0])),
            gt_fmt_ns(gt_hist_quantile(h, 0.95), b[1], sizeof(b[1])),
            gt_fmt_ns(gt_hist_quantile(h, 0.99), b[2], sizeof(b[2])),
            gt_fmt_ns(h->count ? h->max_ns : 0, b[3], sizeof(b[3])),
            gt_fmt_ns(h->count ? h->sum_ns / h->count : 0, b[4], sizeof(b[4])));
}

static void ratio_row(FILE *f, const struct gtr_hist *a, const struct gtr_hist *b)
{
    static const double q[3] = {0.50, 0.95, 0.99};
    if (!gt_hist_total(a) || !gt_hist_total(b))
        return;
    fputs("<tr><td>B/A</td><td></td>", f);
    for (int i = 0; i < 3; i++) {
        uint64_t x = gt_hist_quantile(a, q[i]), y = gt_hist_quantile(b, q[i]);
        if (x)
            fprintf(f, "<td class=\"num\">%.2f</td>", (double)y / (double)x);
        else
            fputs("<td></td>", f);
    }
    fputs("<td></td><td></td></tr>\n", f);
}

/* One operation: the curve of each run on a log2 time axis, p50 and p99
 * marked, and the figures in a table. */
static void hist_figure(FILE *f, int op, const struct gtr_hist *const *h, const char *const *run,
                        int nrun)
{
    struct plot p = {.px0 = 50, .px1 = 620, .py0 = 8, .py1 = 150};
    unsigned first = GTR_HIST_BUCKETS, last = 0;
    for (int k = 0; k < nrun; k++)
        for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
            if (h[k]->buckets[i]) {
                if (i < first)
                    first = i;
                if (i > last)
                    last = i;
            }
    if (first == GTR_HIST_BUCKETS)
        return;
    double a0, a1, b0, b1;
    bucket_span(first, &a0, &a1);
    bucket_span(last, &b0, &b1);
    p.xmin = floor(a0);
    p.xmax = ceil(b1);
    if (p.xmax - p.xmin < 3) { /* at least three octaves, centred */
        double mid = (p.xmin + p.xmax) / 2;
        p.xmin = floor(mid - 1.5);
        p.xmax = p.xmin + 3;
    }
    p.ymax = 0;
    for (int k = 0; k < nrun; k++) {
        uint64_t total = gt_hist_total(h[k]);
        for (unsigned i = first; i <= last; i++) {
            double d = density(h[k], total, i);
            if (d > p.ymax)
                p.ymax = d;
        }
    }
    p.ymax *= 1.08;
    fprintf(f, "<figure class=\"hist\" data-op=\"%s\">\n<figcaption><b>%s</b>: %s</figcaption>\n",
            gt_op_name(op), gt_op_name(op), op_what[op]);
    fprintf(f,
            "<svg class=\"hist\" width=\"640\" "
            "height=\"180\" data-op=\"%s\" role=\"img\" aria-label=\"latency of %s\">\n",
            gt_op_name(op), gt_op_name(op));
    fprintf(f,
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
            "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
            p.px0, p.py1, p.px1, p.py1, p.px0, p.py0, p.px0, p.py1);
    /* ticks at 1, 2, 5 x 10^k ns (only 10^k past four decades) */
    double decades = (p.xmax - p.xmin) / log2(10.0);
    for (double d = 1; d < 1e13; d *= 10)
        for (int m = 1; m <= 5; m += (m == 1 ? 1 : 3)) {
            if (decades > 4 && m != 1)
                continue;
            double v = d * m, x = lg(v);
            if (x < p.xmin || x > p.xmax)
                continue;
            char b[32];
            double px = px_x(&p, x);
            fprintf(f,
                    "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                    "<text class=\"tick\" x=\"%.1f\" y=\"%d\" font-size=\"10\" "
                    "text-anchor=\"middle\">%s</text>\n",
                    px, p.py1, px, p.py1 + 4, px, p.py1 + 15, gt_fmt_ns((uint64_t)v, b, sizeof(b)));
        }
    fprintf(f,
            "<text class=\"tick\" x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %d %d)\">share</text>\n"
            "<text class=\"tick\" x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">"
            "latency (log scale)</text>\n",
            p.px0 - 10, (p.py0 + p.py1) / 2, p.px0 - 10, (p.py0 + p.py1) / 2, p.px1, p.py1 + 28);
    static const char *const colour[2][2] = {{"#1f4f94", "#c0610c"}, {"#1f4f94", "#1f4f94"}};
    for (int k = 0; k < nrun; k++)
        hist_path(f, &p, h[k], nrun == 1 ? "run-1" : k ? "run-b" : "run-a", run[k]);
    for (int k = 0; k < nrun; k++) {
        const char *c = colour[nrun == 1][k];
        char w[16];
        snprintf(w, sizeof(w), "%s%sp50", nrun > 1 ? run[k] : "", nrun > 1 ? " " : "");
        mark(f, &p, gt_hist_quantile(h[k], 0.50), w, c, 2 * k);
        snprintf(w, sizeof(w), "%s%sp99", nrun > 1 ? run[k] : "", nrun > 1 ? " " : "");
        mark(f, &p, gt_hist_quantile(h[k], 0.99), w, c, 2 * k + 1);
    }
    fputs("</svg>\n<table class=\"lat\"><tr><th>run</th><th>count</th><th>p50</th><th>p95</th>"
          "<th>p99</th><th>max</th><th>mean</th></tr>\n",
          f);
    for (int k = 0; k < nrun; k++)
        stats_row(f, run[k], h[k]);
    if (nrun == 2)
        ratio_row(f, h[0], h[1]);
    fputs("</table></figure>\n", f);
}

/* Every communicator's histograms summed: the job's latency per operation. */
static void job_hists(const struct gt_job *j, struct gtr_hist *out)
{
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        gt_hist_init(&out[op]);
        for (size_t c = 0; c < j->ncomm; c++)
            gt_hist_merge(&out[op], &j->comms[c].sum->hist[op]);
    }
}

int gt_html_latency_section(FILE *f, const struct gt_job *a, const struct gt_job *b)
{
    struct gtr_hist *ha = malloc(2 * GTR_OP_COUNT * sizeof(*ha));
    if (!ha)
        return ENOMEM;
    struct gtr_hist *hb = ha + GTR_OP_COUNT;
    job_hists(a, ha);
    if (b)
        job_hists(b, hb);
    fputs("<h2>Latency per operation</h2>\n<p class=\"meta\">Every communicator's histogram "
          "summed (the recorder's log-linear buckets, 16 per power of two); the height is the "
          "share of the operations per bucket, divided by the bucket's width on the log axis, "
          "so the area under each curve is the same",
          f);
    fputs(b ? " for A and for B whatever their counts; dashed lines mark p50 and p99.</p>\n"
            : "; dashed lines mark p50 and p99.</p>\n",
          f);
    int drawn = 0;
    fputs("<div class=\"hists\">\n", f);
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *h[2] = {&ha[op], &hb[op]};
        const char *run[2] = {b ? "A" : "all", "B"};
        if (!gt_hist_total(h[0]) && !(b && gt_hist_total(h[1])))
            continue;
        hist_figure(f, op, h, run, b ? 2 : 1);
        drawn++;
    }
    fputs("</div>\n", f);
    if (!drawn)
        fputs("<p>No operation was timed.</p>\n", f);
    free(ha);
    return 0;
}
