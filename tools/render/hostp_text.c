/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hostp_text.c — host pressure (tools/lib/hostp.h) as text lines.
 * Invariant: a figure the model cannot give (no bytes moved, no CPU known)
 * is named as absent, never printed as 0 or -1.
 */
#include "tools/render/hostp_text.h"

#include "tools/lib/model.h"

void gt_hostp_print(FILE *f, const struct gt_hostp *h, const char *indent)
{
    char b1[32], b2[32], b3[32];
    if (!h->nproc) {
        fprintf(f, "%snot recorded (%zu recorder(s) of format 1.4 or older)\n", indent,
                h->nproc_without);
        return;
    }
    double gb = gt_hostp_cpu_per_gb(h), share = gt_hostp_share(h);
    fprintf(f, "%sprocess CPU %.2f s (user %.2f, system %.2f) over %.1f s traced\n", indent,
            h->cpu_s, h->user_s, h->sys_s, h->window_s);
    if (h->nhelper)
        fprintf(f,
                "%scopier process CPU %.2f s (%zu process(es) copied through one; in CPU per GB)\n",
                indent, h->helper_s, h->nhelper);
    if (gb >= 0)
        fprintf(f, "%s%.3f CPU s per GB moved (%s moved)\n", indent, gb,
                gt_fmt_bytes(h->bytes, b1, sizeof(b1)));
    else
        fprintf(f, "%sno bytes moved: no CPU per GB\n", indent);
    if (share >= 0)
        fprintf(f, "%sdata-path threads: %u, %.2f s CPU, %.1f%% of the process CPU%s\n", indent,
                h->threads, h->thread_s, 100 * share,
                h->untracked ? " (some not counted: no free slot)" : "");
    fprintf(f, "%shost memory in the data path: %s high-water (%s now, %s in all)\n", indent,
            gt_fmt_bytes(h->staging_hwm, b1, sizeof(b1)),
            gt_fmt_bytes(h->staging_now, b2, sizeof(b2)),
            gt_fmt_bytes(h->staging_total, b3, sizeof(b3)));
    fprintf(f, "%sresident high-water %s, locked %s, pinned %s", indent,
            gt_fmt_bytes(h->rss_hwm, b1, sizeof(b1)), gt_fmt_bytes(h->locked_hwm, b2, sizeof(b2)),
            gt_fmt_bytes(h->pinned_hwm, b3, sizeof(b3)));
    if (h->flags & GTR_HOST_STATUS_UNREADABLE)
        fprintf(f, " (/proc/self/status unreadable in some process: 0 there)");
    fprintf(f, "\n");
    if (h->nproc_without)
        fprintf(f, "%s(%zu more process(es) without host-pressure records: not counted)\n", indent,
                h->nproc_without);
}
