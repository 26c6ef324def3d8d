/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab_text.c — the A/B's three groups as text: diff's table and conclusion,
 * and summary's view of one job (the job, each node, the busiest
 * communicators).  Invariant: prints the model's rows and states as they
 * are (tools/lib/ab.c judges); nothing at all for a job without host
 * sections, so older runs print as before.
 */
#include "tools/render/ab_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/render/hostp_text.h"

/* text after lead, cut at spaces into lines of at most 96 columns */
static void wrap(FILE *f, const char *lead, const char *text)
{
    size_t col = strlen(lead);
    fputs(lead, f);
    const char *p = text;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col > 3 && col + 1 + w > 96) {
            fputs("\n   ", f);
            col = 3;
        } else if (p != text) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

static const char *mark(const struct gt_ab_row *r)
{
    switch (r->state) {
    case GT_AB_NOISE:
        return r->role == GT_AB_MECH ? "within 5 pt"
               : r->below_floor      ? "within the resolution"
                                     : "within noise";
    case GT_AB_UP:
    case GT_AB_DOWN:
        return r->fmt == GT_AB_F_TEXT ? "" : r->role == GT_AB_MECH ? "changed" : "beyond noise";
    case GT_AB_UNKNOWN:
        return "noise unknown";
    case GT_AB_NOTEVID:
        return r->role == GT_AB_PEER ? "not evidence (waits on the peer)" : "not evidence";
    case GT_AB_SAME:
        return r->fmt == GT_AB_F_TEXT ? "" : "same";
    default:
        return "";
    }
}

void gt_ab_print(FILE *f, const struct gt_ab *ab)
{
    char stat[512];
    if (ab->k[0] < 2 || ab->k[1] < 2)
        snprintf(stat, sizeof(stat),
                 "%d run(s) of A, %d of B: with one run a side the run-to-run noise is unknown, "
                 "so no row is judged beyond or within noise; repeat the runs (3 or more a "
                 "side, interleaved A1 B1 A2 B2 ...)",
                 ab->k[0], ab->k[1]);
    else
        snprintf(stat, sizeof(stat),
                 "%d runs of A, %d of B: each row compares the per-run values (Welch's t, on "
                 "the log scale for positive figures; A and B are the runs' means); the %d "
                 "rows marked * are the evidence, judged together (Holm) at a false-alarm rate "
                 "of %.0f %%, each interval drawn at its Holm level",
                 ab->k[0], ab->k[1], ab->nfamily, 100 * ab->alpha);
    fprintf(f, "\nthe three groups, side by side\n");
    wrap(f, "   ", stat);
    fprintf(f, "   %-38s %16s %16s %9s  interval\n", "", "A", "B", "B-A");
    for (int g = 0; g < GT_AB_GROUPS; g++) {
        fprintf(f, " %s\n", gt_ab_group_name(g));
        if (g == GT_AB_SLO && ab->slo_why[0])
            wrap(f, "   collectives not recorded: ", ab->slo_why);
        int n = 0;
        for (int i = 0; i < ab->nrow; i++)
            n += ab->row[i].group == g;
        if (!n && g == GT_AB_HOST)
            fprintf(f, "   not recorded (the recorders have no host section: format < 1.5)\n");
        for (int i = 0; i < ab->nrow; i++) {
            const struct gt_ab_row *r = &ab->row[i];
            if (r->group != g)
                continue;
            const char *m = mark(r);
            char line[256];
            snprintf(line, sizeof(line), "  %c%-38s %16s %16s %9s %-18s %s", r->family ? '*' : ' ',
                     r->name, r->a, r->b, r->delta, r->ci[0] && strcmp(r->ci, "-") ? r->ci : "", m);
            size_t l = strlen(line);
            while (l && line[l - 1] == ' ')
                line[--l] = 0;
            fprintf(f, "%s\n", line);
        }
    }
    fprintf(f, "conclusion: %s\n", ab->conclusion);
}

/* ---- summary's view ---------------------------------------------------- */

/* summary's SLO lines of a job (comm_id UINT64_MAX) or a communicator */
static void slo_text(FILE *f, const struct gt_job *j, uint64_t comm_id, const char *ind)
{
    struct gt_ab_slo *s = malloc(sizeof(*s));
    if (!s)
        return;
    gt_ab_slo_of(j, comm_id, s);
    if (!s->recorded) {
        char lead[64];
        snprintf(lead, sizeof(lead), "%sapplication SLO: not recorded: ", ind);
        wrap(f, lead, s->why);
        free(s);
        return;
    }
    char x[24];
    fprintf(f, "%sapplication SLO (NCCL's profiler interface):", ind);
    if (s->init_ns >= 0)
        fprintf(f, " init (net init -> profiler) %s",
                gt_fmt_ns((uint64_t)s->init_ns, x, sizeof(x)));
    fputc('\n', f);
    for (int fn = 0; fn < GTR_COLL_FUNC_COUNT; fn++) {
        const struct gt_ab_slo_fn *q = &s->fn[fn];
        if (!q->present)
            continue;
        char p50[24], p95[24], p99[24];
        fprintf(f, "%s   %-13s x%-7llu p50 %s  p95 %s  p99 %s", ind, gt_coll_func_name(fn),
                (unsigned long long)q->h.count, gt_fmt_ns(gt_hist_quantile(&q->h, 0.5), p50, 24),
                gt_fmt_ns(gt_hist_quantile(&q->h, 0.95), p95, 24),
                gt_fmt_ns(gt_hist_quantile(&q->h, 0.99), p99, 24));
        double g = gt_ab_slo_gbs(q);
        if (!isnan(g))
            fprintf(f, "  algbw %.3g GB/s", g);
        fputc('\n', f);
    }
    free(s);
}

static size_t *comms_by_bytes(const struct gt_job *j)
{
    size_t *ix = malloc((j->ncomm ? j->ncomm : 1) * sizeof(*ix));
    if (!ix)
        return NULL;
    for (size_t i = 0; i < j->ncomm; i++)
        ix[i] = i;
    /* insertion sort by bytes moved, largest first (stable: report order) */
    for (size_t i = 1; i < j->ncomm; i++)
        for (size_t k = i; k > 0; k--) {
            const struct gtr_comm *x = j->comms[ix[k - 1]].sum, *y = j->comms[ix[k]].sum;
            if (x->send_bytes + x->recv_bytes >= y->send_bytes + y->recv_bytes)
                break;
            size_t t = ix[k];
            ix[k] = ix[k - 1];
            ix[k - 1] = t;
        }
    return ix;
}

static void evidence_line(FILE *f, const char *ind, int code, int emulated,
                          const uint64_t did[GTR_METHOD_COUNT])
{
    uint64_t t = 0;
    for (int m = 0; m < GTR_METHOD_COUNT; m++)
        t += did[m];
    fprintf(f, "%sevidence: %s%s", ind, gt_verdict_name(code), emulated ? " (emulated)" : "");
    for (int m = 0; m < GTR_METHOD_COUNT && t; m++)
        if (did[m])
            fprintf(f, ", %s %.1f%%", gt_method_name(m), 100.0 * (double)did[m] / (double)t);
    fprintf(f, "\n");
}

void gt_ab_summary_text(FILE *f, const struct gt_job *j, int all)
{
    if (!gt_hostp_recorded(j))
        return;
    struct gt_hostp h;
    fprintf(f, "\n== three groups (the runbook: application SLO, NCCL/RDMA evidence, host "
               "pressure)\n");
    gt_hostp_of_job(j, &h);
    uint64_t did_all[GTR_METHOD_COUNT] = {0};
    for (size_t i = 0; i < j->nnodes; i++)
        for (int m = 0; m < GTR_METHOD_COUNT; m++)
            did_all[m] += j->nodes[i].did[m];
    fprintf(f, "   job (%zu process(es))\n", j->nrec);
    slo_text(f, j, UINT64_MAX, "      ");
    evidence_line(f, "      ", j->overall.code, j->overall.emulated, did_all);
    fprintf(f, "      host pressure:\n");
    gt_hostp_print(f, &h, "         ");
    for (size_t i = 0; i < j->nnodes && j->nnodes > 1; i++) {
        const struct gt_node *nd = &j->nodes[i];
        fprintf(f, "   node %s (%d process(es))\n", nd->host, nd->nproc);
        evidence_line(f, "      ", nd->code, j->overall.emulated, nd->did);
        gt_hostp_of_node(j, nd->host, &h);
        fprintf(f, "      host pressure:\n");
        gt_hostp_print(f, &h, "         ");
    }
    size_t *ix = comms_by_bytes(j);
    size_t show = all || j->ncomm <= GT_AB_SUMMARY_COMMS ? j->ncomm : GT_AB_SUMMARY_COMMS;
    for (size_t k = 0; ix && k < show; k++) {
        const struct gt_ccomm *c = &j->comms[ix[k]];
        uint64_t did[GTR_METHOD_COUNT] = {0};
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += c->sum->reg_count[a][m];
        fprintf(f, "   communicator %s (%zu process(es), %d node(s))\n", c->label, c->nprocs,
                c->nhosts);
        if (c->has_comm_id == 1 && j->coll) /* the job's line said why when none */
            slo_text(f, j, c->comm_id, "      ");
        evidence_line(f, "      ", c->v.code, c->v.emulated, did);
        gt_hostp_of_comm(j, ix[k], &h);
        fprintf(f, "      host pressure of its processes (all their communicators):\n");
        gt_hostp_print(f, &h, "         ");
    }
    if (ix && show < j->ncomm)
        fprintf(f, "   (%zu more communicator(s); summary --full lists each)\n", j->ncomm - show);
    free(ix);
}
