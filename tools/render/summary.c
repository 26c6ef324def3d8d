/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary.c — the summary report's text: compact (the job, its
 * communicators and the processes that differ, the verdict) or --full (per
 * node, per process, per communicator across processes, each verdict), then
 * the three groups, the collectives and the kernel's corroboration.  The
 * sections are in summary_job.c, summary_comms.c, summary_proc.c.
 * Invariant: output depends only on the model (plus the liveness judged at
 * load or dump time, and the kernel's bufinfo read now), so a dump archive
 * reports exactly like the live files it was made from; the only line naming
 * where a recorder was read from starts with "source".
 */
#include "tools/render/summary.h"

#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"
#include "tools/lib/kcorr.h"
#include "tools/render/ab_text.h"
#include "tools/render/coll_text.h"
#include "tools/render/summary_parts.h"

/* "== kernel corroboration": what the kernel shows now of the recorded
 * DMA-BUF registrations (live recorders on this host only). */
static void kc_text(FILE *f, const struct gt_job *j)
{
    struct gt_kcorr_job *v = malloc(sizeof(*v));
    if (!v || !gt_kcorr_of_job(j, v)) {
        free(v);
        return;
    }
    char b[32], line[512];
    snprintf(line, sizeof(line), "== kernel corroboration (%s, read now)", gt_esc(v->k.path));
    fputc('\n', f);
    gt_report_wrap(f, 0, 3, line);
    snprintf(line, sizeof(line),
             "%d live recorder(s) on this host: %llu DMA-BUF registration(s) recorded, %llu "
             "deregistration(s) of any kind",
             v->nlive, (unsigned long long)v->dmabuf_regs, (unsigned long long)v->deregs);
    fprintf(f, "   ");
    gt_report_wrap(f, 3, 5, line);
    if (!v->k.readable) {
        snprintf(line, sizeof(line),
                 "not readable: %s (debugfs must be mounted and readable, usually root)",
                 gt_kcorr_error(&v->k));
        fprintf(f, "   ");
        gt_report_wrap(f, 3, 5, line);
        free(v);
        return;
    }
    fprintf(f, "   kernel: %llu dma-buf object(s), %llu exported by nv_dmabuf (%s)\n",
            (unsigned long long)v->k.objects, (unsigned long long)v->k.nv_objects,
            gt_fmt_bytes(v->k.nv_bytes, b, sizeof(b)));
    int shown = 0;
    for (size_t i = 0; i < j->nrec; i++) {
        const struct gt_recfile *r = &j->recs[i];
        if (!gt_kcorr_live_here(r))
            continue;
        for (uint32_t d = 0; d < r->ndev; d++) {
            const struct gtr_device *dv = &r->devs[d];
            if (!dv->in_use || !dv->pci_path[0])
                continue;
            const char *bdf = strrchr(dv->pci_path, '/');
            bdf = bdf ? bdf + 1 : dv->pci_path;
            int dup = 0;
            for (size_t q = 0; q < i && !dup; q++)
                for (uint32_t e = 0; gt_kcorr_live_here(&j->recs[q]) && e < j->recs[q].ndev; e++)
                    dup |= j->recs[q].devs[e].in_use &&
                           !strcmp(j->recs[q].devs[e].pci_path, dv->pci_path);
            for (uint32_t e = 0; e < d; e++)
                dup |= r->devs[e].in_use && !strcmp(r->devs[e].pci_path, dv->pci_path);
            if (dup)
                continue;
            fprintf(f, "   NIC %-12s %-14s nv_dmabuf objects attached: %llu\n", gt_esc(dv->name),
                    gt_esc(bdf), (unsigned long long)gt_kcorr_attached(&v->k, dv->pci_path));
            shown++;
        }
    }
    if (!shown)
        fprintf(f, "   (no device with a PCI address recorded)\n");
    if (v->dmabuf_regs && !v->k.nv_objects)
        fprintf(f, "   WARNING: DMA-BUF registrations were recorded but the kernel lists no\n"
                   "   nv_dmabuf object now (released, or not GPU memory)\n");
    free(v);
}

/* The compact report: the job, its communicators, the verdict. */
static void text_compact(FILE *f, const struct gt_job *j, int flags)
{
    gt_sum_job(f, j);
    gt_sum_comms(f, j, flags);
    fprintf(f, "\n== verdict\n   all  %s  ",
            gt_verdict_label(j->overall.code, j->overall.emulated));
    /* "   all  " LABEL "  ": 10 columns and the label's */
    gt_report_wrap(f, 10 + gt_text_cols(gt_verdict_label(j->overall.code, j->overall.emulated)), 7,
                   gt_esc(j->overall.why));
}

/* --full's node table: processes, communicators, registrations, verdict. */
static void full_nodes(FILE *f, const struct gt_job *j)
{
    fprintf(f, "== nodes\n   %-20s %5s %5s %9s %9s %9s %9s  %s\n", "host", "procs", "comms",
            "dmabuf", "peermem", "host", "failed", "verdict");
    for (size_t i = 0; i < j->nnodes; i++) {
        const struct gt_node *nd = &j->nodes[i];
        fprintf(f, "   ");
        gt_text_cell(f, gt_esc(nd->host), 20, 3);
        fprintf(f, "%5d %5d %9llu %9llu %9llu %9llu  ", nd->nproc, nd->ncomm,
                (unsigned long long)nd->did[0], (unsigned long long)nd->did[1],
                (unsigned long long)nd->did[2], (unsigned long long)nd->did[3]);
        gt_report_wrap(f, 77, 79, gt_verdict_label(nd->code, j->overall.emulated));
    }
}

/* --full's communicators across processes: the table, then each one held by
 * two processes or more in detail. */
static void full_comms(FILE *f, const struct gt_job *j)
{
    fprintf(f, "\n== communicators across %zu process(es) on %d host(s)\n", j->nrec, j->nhosts);
    fprintf(f, "   %-20s %5s %5s %8s %8s %8s %8s %5s %5s  %s\n", "comm", "procs", "hosts", "dmabuf",
            "peermem", "host", "failed", "fallb", "errs", "verdict");
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        uint64_t did[GTR_METHOD_COUNT] = {0};
        for (int a = 0; a < GTR_ASKED_COUNT; a++)
            for (int m = 0; m < GTR_METHOD_COUNT; m++)
                did[m] += x->sum->reg_count[a][m];
        fprintf(f, "   ");
        gt_text_cell(f, gt_esc(x->label), 20, 3);
        fprintf(f, "%5zu %5d %8llu %8llu %8llu %8llu %5llu %5llu  ", x->nprocs, x->nhosts,
                (unsigned long long)did[0], (unsigned long long)did[1], (unsigned long long)did[2],
                (unsigned long long)did[3], (unsigned long long)x->sum->fallback_count,
                (unsigned long long)x->sum->error_count);
        gt_report_wrap(f, 85, 87, gt_verdict_label(x->v.code, x->v.emulated));
    }
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (x->nprocs < 2)
            continue;
        fprintf(f, "\n   comm %s across %zu process(es) on %d host(s)\n", gt_esc(x->label),
                x->nprocs, x->nhosts);
        gt_sum_comm_body(f, x->sum, "     ", 0);
    }
}

/* --full's "== verdict": each communicator's, then the input's. */
static void full_verdict(FILE *f, const struct gt_job *j)
{
    fprintf(f, "\n== verdict\n");
    for (size_t i = 0; i < j->ncomm; i++) {
        char head[160];
        snprintf(head, sizeof(head), "   comm %-20s %-15s ", gt_esc(j->comms[i].label),
                 gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated));
        fputs(head, f);
        gt_report_wrap(f, gt_text_cols(head),
                       gt_report_hang(gt_text_cols(head),
                                      gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated)),
                       gt_esc(j->comms[i].v.why));
    }
    char head[160];
    snprintf(head, sizeof(head), "   %-25s %-15s ", "all",
             gt_verdict_label(j->overall.code, j->overall.emulated));
    fputs(head, f);
    gt_report_wrap(
        f, gt_text_cols(head),
        gt_report_hang(gt_text_cols(head), gt_verdict_label(j->overall.code, j->overall.emulated)),
        gt_esc(j->overall.why));
}

/* --full: per node, per process (procs[i] already written, or written
 * here), per communicator across processes, the verdicts. */
static void text_full(FILE *f, const struct gt_job *j, int flags, char *const *procs)
{
    full_nodes(f, j);
    for (size_t i = 0; i < j->nrec; i++)
        if (procs)
            fputs(procs[i] ? procs[i] : "", f);
        else
            gt_report_process(f, &j->recs[i], flags);
    full_comms(f, j);
    full_verdict(f, j);
}

void gt_report_text(FILE *f, const struct gt_job *j, int flags)
{
    gt_report_text_procs(f, j, flags, NULL);
}

void gt_report_text_procs(FILE *f, const struct gt_job *j, int flags, char *const *procs)
{
    if (!j->nrec) {
        fprintf(f, "no recorders found\n");
        return;
    }
    if (flags & GT_REPORT_FULL)
        text_full(f, j, flags, procs);
    else
        text_compact(f, j, flags);
    gt_ab_summary_text(f, j, flags & GT_REPORT_FULL); /* nothing before format 1.5 */
    /* nothing before format 1.6; the histograms with --full */
    gt_coll_text(f, j->coll, (flags & GT_REPORT_BARS) && (flags & GT_REPORT_FULL));
    kc_text(f, j);
}
