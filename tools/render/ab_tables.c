/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab_tables.c — diff's tables before the three groups (ab_tables.h): the
 * method mix of each side's first run, fallbacks by reason, errors, and the
 * latency per operation with B-A and B/A.  Prints the counters as they are.
 */
#include "tools/render/ab_tables.h"

#include "tools/lib/hist.h"
#include "tools/render/json_diff.h"

static uint64_t did_m(const struct gtr_comm *c, int m)
{
    uint64_t t = 0;
    for (int a = 0; a < GTR_ASKED_COUNT; a++)
        t += c->reg_count[a][m];
    return t;
}

/* method mix, fallbacks by reason, errors */
void gt_ab_print_mix(FILE *f, const struct gtr_comm *A, const struct gtr_comm *B)
{
    uint64_t ta = gt_comm_regs(A), tb = gt_comm_regs(B);
    fprintf(f, "\nmethod mix (all registrations)\n   %-9s %10s %7s %10s %7s\n", "method", "A",
            "A %", "B", "B %");
    for (int m = 0; m < GTR_METHOD_COUNT; m++) {
        uint64_t a = did_m(A, m), b = did_m(B, m);
        fprintf(f, "   %-9s %10llu %6.1f%% %10llu %6.1f%%\n", gt_method_name(m),
                (unsigned long long)a, ta ? 100.0 * (double)a / (double)ta : 0.0,
                (unsigned long long)b, tb ? 100.0 * (double)b / (double)tb : 0.0);
    }
    fprintf(f, "\n   %-9s %10s %10s\n", "", "A", "B");
    fprintf(f, "   %-9s %10llu %10llu\n", "fallbacks", (unsigned long long)A->fallback_count,
            (unsigned long long)B->fallback_count);
    for (unsigned r = 0; r < GTR_REASON_SLOTS; r++) {
        uint64_t a = gtr_reason_count(A, GTR_FALLBACKS, r);
        uint64_t b = gtr_reason_count(B, GTR_FALLBACKS, r);
        if (a || b)
            fprintf(f, "     %-22s %10llu %10llu\n", gt_reason_slot_name((int)r),
                    (unsigned long long)a, (unsigned long long)b);
    }
    fprintf(f, "   %-9s %10llu %10llu\n", "errors", (unsigned long long)A->error_count,
            (unsigned long long)B->error_count);
}

void gt_ab_print_latency(FILE *f, const struct gtr_comm *A, const struct gtr_comm *B)
{
    fprintf(f, "\nlatency (all communicators)\n   %-6s %-4s %10s %10s %11s %8s\n", "op", "", "A",
            "B", "B-A", "B/A");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        const struct gtr_hist *ha = &A->hist[op], *hb = &B->hist[op];
        if (!ha->count && !hb->count)
            continue;
        for (int q = 0; q < GT_DIFF_NQ; q++) {
            uint64_t a = gt_diff_qval(ha, q), b = gt_diff_qval(hb, q);
            char x[24], y[24], d[24];
            gt_fmt_ns(b > a ? b - a : a - b, d, sizeof(d));
            char dd[28];
            snprintf(dd, sizeof(dd), "%s%s", b >= a ? "+" : "-", d);
            char ratio[16] = "-";
            if (a && b)
                snprintf(ratio, sizeof(ratio), "%.2fx", (double)b / (double)a);
            fprintf(f, "   %-6s %-4s %10s %10s %11s %8s\n", q ? "" : gt_op_name(op),
                    gt_diff_qname[q], ha->count ? gt_fmt_ns(a, x, sizeof(x)) : "-",
                    hb->count ? gt_fmt_ns(b, y, sizeof(y)) : "-",
                    (ha->count && hb->count) ? dd : "-", ratio);
        }
    }
    if (A->hist[GTR_OP_SEND].count || A->hist[GTR_OP_RECV].count || B->hist[GTR_OP_SEND].count ||
        B->hist[GTR_OP_RECV].count)
        fprintf(f, "   send, recv: from the post (isend/irecv) to the test() that finds it done,\n"
                   "   which includes waiting for the peer: milliseconds there are normal.\n");
}
