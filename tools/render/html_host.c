/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_host.c — the report's host-pressure bars (html_host.h).  Each figure
 * is a row: one bar per run, scaled to the larger of the two, its value, and
 * for an A/B the delta with "within noise" or "beyond noise" (tools/lib/ab.c's
 * rules); the A/B's conclusion line above them.
 */
#include "tools/render/html_host.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/ab.h"
#include "tools/lib/hostp.h"
#include "tools/render/html.h"

/* the host group's rows of an A/B, or one run's figures as rows (b NaN) */
static void one_run_rows(struct gt_ab *ab, const struct gt_hostp *h)
{
    struct {
        const char *name;
        double v;
        const char *fmt;
    } f[] = {
        {"process CPU, traced (s)", h->cpu_s, "%.2f"},
        {"CPU s per GB moved", gt_hostp_cpu_per_gb(h), "%.3f"},
        {"data-path thread CPU share", gt_hostp_share(h) * 100, "%.1f %%"},
        {"host memory in the data path", (double)h->staging_hwm, NULL},
        {"resident high-water", (double)h->rss_hwm, NULL},
        {"locked high-water", (double)h->locked_hwm, NULL},
        {"pinned high-water", (double)h->pinned_hwm, NULL},
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && ab->nrow < GT_AB_ROWS; i++) {
        struct gt_ab_row *r = &ab->row[ab->nrow++];
        memset(r, 0, sizeof(*r));
        r->group = GT_AB_HOST;
        snprintf(r->name, sizeof(r->name), "%s", f[i].name);
        r->va = f[i].v < 0 ? NAN : f[i].v;
        r->vb = NAN;
        if (isnan(r->va))
            snprintf(r->a, sizeof(r->a), "-");
        else if (f[i].fmt)
            snprintf(r->a, sizeof(r->a), f[i].fmt, r->va);
        else
            gt_fmt_bytes((uint64_t)r->va, r->a, sizeof(r->a));
    }
}

static void bar(FILE *f, double x, double y, double w, const char *cls)
{
    fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\"/>", cls, x, y,
            w < 0.5 ? 0.5 : w);
}

int gt_html_host_section(FILE *f, const struct gt_job *a, const struct gt_job *b)
{
    if (!gt_hostp_recorded(a) && !(b && gt_hostp_recorded(b)))
        return 0;
    struct gt_ab *ab = calloc(1, sizeof(*ab));
    if (!ab)
        return ENOMEM;
    if (b) {
        if (gt_ab_build_jobs(ab, a, b, 0)) {
            free(ab);
            return ENOMEM;
        }
    } else {
        gt_hostp_of_job(a, &ab->hostp[0]);
        one_run_rows(ab, &ab->hostp[0]);
    }
    fputs("<section class=\"host\">\n<h2>Host pressure</h2>\n<p class=\"meta\">What the traced "
          "processes cost their host (format 1.5 recorders): process CPU over the traced "
          "window, CPU seconds per GB moved, the share of it in the threads that drove the data "
          "path (NCCL's proxy threads), host memory registered for the data path (staging) and "
          "the resident, locked and pinned high-water.",
          f);
    if (b)
        fputs("  Bars of a row are scaled to the larger run; the noise rules are "
              "<span class=\"mono\">gdrtrace diff</span>'s (docs/diff.md).",
              f);
    fputs("</p>\n", f);
    if (b) {
        fputs("<p class=\"banner\">", f);
        gt_html_escape(f, ab->conclusion, 0);
        fputs("</p>\n<p class=\"meta\">The conclusion assumes A and B differ only in the "
              "registration path: <span class=\"mono\">gdrtrace diff A B</span> checks it.</p>\n",
              f);
    }
    int nrow = 0;
    for (int i = 0; i < ab->nrow; i++)
        nrow += ab->row[i].group == GT_AB_HOST;
    const double lw = 230, bw = 300, rh = b ? 34 : 20;
    fprintf(f,
            "<div class=\"scroll\"><svg class=\"hostbars\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"host pressure\">\n",
            lw + bw + 260, 10 + rh * nrow);
    int k = 0;
    for (int i = 0; i < ab->nrow; i++) {
        const struct gt_ab_row *r = &ab->row[i];
        if (r->group != GT_AB_HOST)
            continue;
        double y = 8 + rh * k++;
        double m = fmax(isnan(r->va) ? 0 : r->va, isnan(r->vb) ? 0 : r->vb);
        fprintf(f, "<text x=\"0\" y=\"%.1f\">", y + 10);
        gt_html_escape(f, r->name, 0);
        fputs("</text>", f);
        for (int s = 0; s < (b ? 2 : 1); s++) {
            double v = s ? r->vb : r->va;
            double yy = y + s * 14;
            if (!isnan(v) && m > 0)
                bar(f, lw, yy, bw * v / m, b ? (s ? "run-b" : "run-a") : "run-1");
            fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%s", lw + bw + 8, yy + 10,
                    b ? (s ? "B " : "A ") : "");
            gt_html_escape(f, s ? r->b : r->a, 0);
            if (b && s) {
                fputs("  ", f);
                gt_html_escape(f, r->delta, 0);
                fprintf(f, "%s",
                        r->state == GT_AB_NOISE                          ? " (within noise)"
                        : r->state == GT_AB_UP || r->state == GT_AB_DOWN ? " (beyond noise)"
                        : r->state == GT_AB_UNKNOWN                      ? " (noise unknown)"
                                                                         : "");
            }
            fputs("</text>", f);
        }
        fputc('\n', f);
    }
    fputs("</svg></div>\n</section>\n", f);
    free(ab);
    return 0;
}
