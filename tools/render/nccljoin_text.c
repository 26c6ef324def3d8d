/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin_text.c — the text of NCCL's log joined to the recorders
 * (tools/lib/nccljoin.h): verdict's `comm` and `nccl` lines, the counts
 * line, summary's "== NCCL's log" section and the next step.  A function of
 * the join only: it decides nothing, every verdict and reason is the
 * join's; lines wrap at GT_REPORT_COLS like the rest of the report, and
 * every string NCCL's log gave goes through gt_esc().
 */
#include "tools/render/nccljoin_text.h"

#include <stdarg.h>
#include <string.h>

#include "tools/lib/esc.h"
#include "tools/render/next.h"
#include "tools/render/text.h"

void gt_nccl_join_print_next(FILE *f, const char *ind, const struct gt_nccl_join *nj,
                             const struct gt_job *j, char **paths, int npaths)
{
    char next[1024];
    if (nj && gt_nccl_join_next(nj, j, next, sizeof(next))) {
        int w = fprintf(f, "%snext: ", ind);
        gt_report_wrap(f, w, w, next);
    } else {
        gt_report_next(f, ind, j, paths, npaths);
    }
}

void gt_nccl_join_print_comms(FILE *f, const struct gt_nccl_join *nj)
{
    for (size_t i = 0; i < nj->ncomm; i++) {
        const struct gt_nj_comm *c = &nj->comms[i];
        char head[256];
        int w = snprintf(head, sizeof(head), "comm %-20s %-15s ", gt_esc(c->label), gt_nj_label(c));
        fputs(head, f);
        gt_report_wrap(f, w, gt_report_hang(w, gt_nj_label(c)), gt_esc(c->why));
    }
}

void gt_nccl_join_print_procs(FILE *f, const struct gt_nccl_join *nj, int emulated)
{
    for (size_t i = 0; i < nj->nproc; i++) {
        const struct gt_nj_proc *p = &nj->procs[i];
        char label[96];
        snprintf(label, sizeof(label), "%s:%d", p->host, p->pid);
        char head[256];
        const char *lab = gt_verdict_label(p->code, emulated);
        int w = snprintf(head, sizeof(head), "nccl %-20s %-15s ", gt_esc(label), lab);
        fputs(head, f);
        gt_report_wrap(f, w, gt_report_hang(w, lab), gt_esc(p->why));
    }
}

/* A line of text wrapped at GT_REPORT_COLS, continuations indented. */
static void wrapf(FILE *f, int indent, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void wrapf(FILE *f, int indent, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    int lead = (int)strspn(buf, " "); /* the wrapper starts a line at a word */
    fprintf(f, "%.*s", lead, buf);
    gt_report_wrap(f, lead, indent, buf + lead);
}

static void print_counts(FILE *f, const struct gt_nccl_join *nj, const char *ind)
{
    const struct gt_nlog *l = nj->log;
    char more[256] = "";
    if (l->foreign || l->binary || l->too_long || l->dropped)
        snprintf(more, sizeof(more),
                 "; unknown: %llu line(s) not NCCL's, %llu with NUL bytes, %llu over %d bytes, "
                 "%llu fact(s) over a cap",
                 (unsigned long long)l->foreign, (unsigned long long)l->binary,
                 (unsigned long long)l->too_long, GT_NLOG_LINE_MAX, (unsigned long long)l->dropped);
    /* step 3b: what it attributed, and why not where it could not */
    char order[512] = "";
    if (nj->by_order)
        snprintf(order, sizeof(order), ", %llu more by connection order",
                 (unsigned long long)nj->by_order);
    size_t nwhy = 0, first = 0;
    for (size_t pi = 0; pi < l->nproc; pi++)
        if (nj->order[pi].why[0] && !nwhy++)
            first = pi;
    if (nwhy)
        gt_appendf(order, sizeof(order), "; not by connection order in %s:%d: %s%s",
                   l->procs[first].host, l->procs[first].pid, nj->order[first].why,
                   nwhy > 1 ? " (and other processes)" : "");
    wrapf(f, (int)strlen(ind) + 10,
          "%snccl-log: %llu file(s), %llu line(s), %llu of NCCL's (%llu used); %zu communicator "
          "record(s) of %zu process(es); %llu channel line(s), %llu not attributed (%llu "
          "ambiguous)%s%s",
          ind, (unsigned long long)l->files, (unsigned long long)l->lines,
          (unsigned long long)l->nccl_lines, (unsigned long long)l->used, l->ncomm, l->nproc,
          (unsigned long long)l->channels, (unsigned long long)(l->unattributed - nj->by_order),
          (unsigned long long)(l->ambiguous - nj->by_order), order, more);
}

void gt_nccl_join_print_counts(FILE *f, const struct gt_nccl_join *nj)
{
    print_counts(f, nj, "");
}

void gt_nccl_join_print_section(FILE *f, const struct gt_nccl_join *nj)
{
    const struct gt_nlog *l = nj->log;
    fprintf(f, "\n== NCCL's log\n");
    print_counts(f, nj, "   ");
    for (size_t pi = 0; pi < l->nproc; pi++) {
        const struct gt_nlog_proc *p = &l->procs[pi];
        char plugin[96] = "";
        if (p->plugin_name[0])
            snprintf(plugin, sizeof(plugin), " (%s, v%d)", gt_esc(p->plugin_name), p->plugin_abi);
        wrapf(f, 6, "   process %s:%d  NCCL %s  plugin %s%s  %d communicator record(s)",
              gt_esc(p->host), p->pid, p->version[0] ? gt_esc(p->version) : "?",
              gt_nlog_plugin_name(p->plugin), plugin, p->ncomm);
        if (p->quote_plugin[0])
            wrapf(f, 12, "      NCCL: \"%s\"", gt_esc(p->quote_plugin));
        if (p->quote_net[0])
            wrapf(f, 12, "      NCCL: \"%s\"", gt_esc(p->quote_net));
        for (uint32_t g = 0; g < p->ngdr; g++)
            wrapf(f, 12, "      gdr   \"%s\"%s", gt_esc(p->gdr[g].quote),
                  p->gdr[g].count > 1 ? " (repeated)" : "");
        uint32_t un = 0;
        for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
            un += p->unattributed[k];
        un -= nj->order[pi].lines;
        if (un)
            wrapf(f, 9, "      %u channel line(s) not attributed, first: \"%s\"", un,
                  gt_esc(p->quote_unattr));
    }
    for (size_t i = 0; i < nj->ncomm; i++) {
        const struct gt_nj_comm *c = &nj->comms[i];
        if (!c->in_log)
            continue;
        char joined[64] = "";
        if (c->joined_by[0])
            snprintf(joined, sizeof(joined), ", joined by %s", c->joined_by);
        wrapf(f, 6, "   comm %s  %s  ranks %d/%d on %d host(s) [%s], nNodes %d, network %s%s",
              gt_esc(c->label), gt_nj_kind_name(c->kind), c->ranks_seen, c->nranks, c->nhosts,
              gt_esc(c->hosts), c->nnodes, c->net[0] ? gt_esc(c->net) : "?", joined);
        char ch[512] = "";
        size_t k = 0;
        for (int x = 0; x < GT_NLOG_CH_COUNT && k < sizeof(ch); x++)
            if (c->ch[x])
                k += (size_t)snprintf(ch + k, sizeof(ch) - k, " %s %u", gt_nlog_ch_name(x),
                                      c->ch[x]);
        if (c->ch_gdrdma && k < sizeof(ch))
            k += (size_t)snprintf(ch + k, sizeof(ch) - k, " (GDRDMA %u)", c->ch_gdrdma);
        if (c->amb && k < sizeof(ch))
            k += (size_t)snprintf(ch + k, sizeof(ch) - k, "%s ambiguous %u", k ? "," : "", c->amb);
        wrapf(f, 9, "      channels:%s", k ? ch : " none");
    }
}
