/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary_comms.c — the compact summary's communicators: one row each
 * (processes, nodes, verdict, median p50s), quiet communicators alike in
 * verdict and shape shown once, then the processes that differ from their
 * communicator's majority (--ranks: every process).  Invariant: a
 * communicator where a process differs is never folded into a group, and
 * every list left short says how many it left out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/esc.h"
#include "tools/render/summary.h"
#include "tools/render/summary_parts.h"

static const char *rank_label(const struct gt_recfile *r, char *buf, size_t n)
{
    if (r->id.rank >= 0)
        snprintf(buf, n, "rank %d", r->id.rank);
    else
        snprintf(buf, n, "rank ?");
    return buf;
}

/* One line for a process that differs from its communicator's norm. */
static void text_differing(FILE *f, const struct gt_job *j, const struct gt_comm_norm *nm,
                           const struct gt_rank_comm *d, unsigned bits, unsigned slow)
{
    const struct gt_recfile *r = &j->recs[d->rec];
    char line[1024], b1[32], b2[32], lab[32];
    snprintf(line, sizeof(line), "%s (%s pid %d):", rank_label(r, lab, sizeof(lab)),
             gt_esc(r->id.host), r->id.pid);
    const char *sep = "";
    if (bits & GT_DIFF_VERDICT) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s (the majority: %s)",
                 gt_verdict_label(d->verdict, 0), gt_verdict_label(nm->majority, 0));
        sep = ";";
    }
    if (bits & GT_DIFF_FALLBACK) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s %llu fallback(s)", sep,
                 (unsigned long long)d->fallbacks);
        sep = ";";
    }
    if (bits & GT_DIFF_ERROR) {
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s %llu error(s)", sep,
                 (unsigned long long)d->errors);
        sep = ";";
    }
    for (int op = 0; op < GTR_OP_COUNT; op++)
        if (slow & (1u << op)) {
            uint64_t m = nm->median[op];
            snprintf(line + strlen(line), sizeof(line) - strlen(line),
                     "%s %s p50 %s, %.1fx the median %s", sep, gt_op_name(op),
                     gt_fmt_ns(d->p50_ns[op], b1, sizeof(b1)), (double)d->p50_ns[op] / (double)m,
                     gt_fmt_ns(m, b2, sizeof(b2)));
            sep = ";";
        }
    fprintf(f, "     ");
    gt_report_wrap(f, 5, 9, line);
}

/* --ranks: one row per process of the communicator. */
static void text_rank_rows(FILE *f, const struct gt_job *j, size_t ci,
                           const struct gt_comm_norm *nm)
{
    const struct gt_ccomm *x = &j->comms[ci];
    fprintf(f, "     %-6s %-16s %8s %-15s %3s %3s %8s %8s %8s\n", "rank", "node", "pid", "verdict",
            "fb", "err", "reg", "send", "recv");
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        const struct gt_recfile *r = &j->recs[d->rec];
        char lab[32], b[3][32], w[16];
        unsigned slow;
        unsigned bits = gt_rank_differs(nm, d, &slow);
        fprintf(f, "     %-6s ", gt_sum_fmt_int(r->id.rank, w, sizeof(w)));
        gt_text_cell(f, gt_esc(r->id.host), 16, 16);
        snprintf(lab, sizeof(lab), "%d", r->id.pid);
        fprintf(
            f, "%8s %-15s %3llu %3llu %8s %8s %8s%s\n", lab, gt_verdict_name(d->verdict),
            (unsigned long long)d->fallbacks, (unsigned long long)d->errors,
            d->p50_ns[GTR_OP_REG] ? gt_fmt_ns(d->p50_ns[GTR_OP_REG], b[0], sizeof(b[0])) : "-",
            d->p50_ns[GTR_OP_SEND] ? gt_fmt_ns(d->p50_ns[GTR_OP_SEND], b[1], sizeof(b[1])) : "-",
            d->p50_ns[GTR_OP_RECV] ? gt_fmt_ns(d->p50_ns[GTR_OP_RECV], b[2], sizeof(b[2])) : "-",
            bits ? " *" : "");
    }
}

/* A communicator's row: label, processes, nodes, verdict, median p50s. */
static void text_comm_row(FILE *f, const struct gt_job *j, const struct gt_ccomm *x,
                          const struct gt_comm_norm *nm)
{
    char b[3][32], n1[24], n2[24];
    fprintf(f, "   ");
    gt_text_cell(f, gt_esc(x->label), 20, 3);
    snprintf(n1, sizeof(n1), "%zu", x->nprocs);
    snprintf(n2, sizeof(n2), "%d", x->nhosts);
    const int ops[3] = {GTR_OP_REG, GTR_OP_SEND, GTR_OP_RECV};
    for (int k = 0; k < 3; k++)
        if (nm->nop[ops[k]])
            gt_fmt_ns(nm->median[ops[k]], b[k], sizeof(b[k]));
        else
            snprintf(b[k], sizeof(b[k]), "-");
    const char *v = gt_verdict_label(x->v.code, x->v.emulated);
    if (gt_text_cols(v) > 15) { /* the emulated label: on its own line */
        fprintf(f, "%6s %5s %-15s %9s %9s %9s\n", n1, n2, "", b[0], b[1], b[2]);
        fprintf(f, "     ");
        gt_report_wrap(f, 5, 7, v);
    } else {
        fprintf(f, "%6s %5s %-15s %9s %9s %9s\n", n1, n2, v, b[0], b[1], b[2]);
    }
    (void)j;
}

/* Quiet communicators (no process differs) alike in verdict and shape are
 * shown once: the first, and a line for how many more. */
struct qgroup {
    int code, emulated;
    size_t nprocs;
    int nhosts;
    size_t count, first, second, last;
};

/* The communicators' norms, which have a process that differs, and the
 * groups of quiet ones (none with --ranks). */
struct comms_view {
    struct gt_comm_norm *nm;
    unsigned char *ndiff; /* ndiff[i]: a process of communicator i differs */
    size_t *grp;          /* grp[i]: its group, SIZE_MAX: none */
    struct qgroup *g;
    size_t ng, differing; /* groups; processes that differ */
};

/* 0, or -1 out of memory. */
static int comms_view(const struct gt_job *j, int all, struct comms_view *v)
{
    size_t n = j->ncomm ? j->ncomm : 1;
    v->nm = calloc(n, sizeof(*v->nm));
    v->ndiff = calloc(n, 1);
    v->grp = calloc(n, sizeof(*v->grp));
    v->g = calloc(n, sizeof(*v->g));
    if (!v->nm || !v->ndiff || !v->grp || !v->g)
        return -1;
    for (size_t i = 0; i < j->ncomm; i++) {
        const struct gt_ccomm *x = &j->comms[i];
        if (gt_comm_norm(j, i, &v->nm[i]))
            return -1;
        for (size_t k = 0; k < x->nrix; k++)
            if (gt_rank_differs(&v->nm[i], &j->ranks[j->rank_ix[x->rix + k]], NULL)) {
                v->ndiff[i] = 1;
                v->differing++;
            }
        v->grp[i] = SIZE_MAX;
        if (v->ndiff[i] || all)
            continue;
        /* groups: few distinct shapes in practice; linear search is enough */
        struct qgroup *g = v->g;
        size_t q = 0;
        for (; q < v->ng; q++)
            if (g[q].code == x->v.code && g[q].emulated == x->v.emulated &&
                g[q].nprocs == x->nprocs && g[q].nhosts == x->nhosts)
                break;
        if (q == v->ng)
            g[v->ng++] =
                (struct qgroup){x->v.code, x->v.emulated, x->nprocs, x->nhosts, 0, i, i, i};
        if (++g[q].count == 2)
            g[q].second = i;
        g[q].last = i;
        v->grp[i] = q;
    }
    return 0;
}

static void comms_view_free(struct comms_view *v)
{
    free(v->nm);
    free(v->ndiff);
    free(v->grp);
    free(v->g);
}

/* "and N more alike ..." under the first communicator of a group. */
static void group_line(FILE *f, const struct gt_job *j, const struct gt_ccomm *x,
                       const struct qgroup *g)
{
    char line[400];
    snprintf(line, sizeof(line),
             "and %zu more alike (%s, %zu process(es) on %d node(s) each, no process "
             "differs): %s%s%s",
             g->count - 1, gt_verdict_label(x->v.code, x->v.emulated), x->nprocs, x->nhosts,
             gt_esc(j->comms[g->second].label), g->count > 2 ? ", ..., " : "",
             g->count > 2 ? gt_esc(j->comms[g->last].label) : "");
    fprintf(f, "     ");
    gt_report_wrap(f, 5, 7, line);
}

/* Communicator i: its row, its group, why, and its processes (--ranks:
 * every one; else those that differ, at most GT_REPORT_LIST_MAX). */
static void comm_entry(FILE *f, const struct gt_job *j, const struct comms_view *v, size_t i,
                       int all)
{
    const struct gt_ccomm *x = &j->comms[i];
    text_comm_row(f, j, x, &v->nm[i]);
    if (v->grp[i] != SIZE_MAX && v->g[v->grp[i]].count > 1)
        group_line(f, j, x, &v->g[v->grp[i]]);
    if (x->v.code != GT_V_DIRECT_DMABUF && x->v.code != GT_V_NO_DATA) {
        fprintf(f, "     why ");
        gt_report_wrap(f, 9, 9, gt_esc(x->v.why));
    }
    if (all) {
        text_rank_rows(f, j, i, &v->nm[i]);
        return;
    }
    size_t shown = 0, nd = 0;
    for (size_t k = 0; k < x->nrix; k++) {
        const struct gt_rank_comm *d = &j->ranks[j->rank_ix[x->rix + k]];
        unsigned slow;
        unsigned bits = gt_rank_differs(&v->nm[i], d, &slow);
        if (!bits)
            continue;
        nd++;
        if (shown++ < GT_REPORT_LIST_MAX)
            text_differing(f, j, &v->nm[i], d, bits, slow);
    }
    if (nd > GT_REPORT_LIST_MAX)
        fprintf(f, "     and %zu more process(es) differ (gdrtrace summary --ranks)\n",
                nd - GT_REPORT_LIST_MAX);
}

/* What the table's figures mean. */
static void comms_notes(FILE *f, const struct gt_job *j, const struct comms_view *v, int all)
{
    int moved = 0;
    for (size_t i = 0; i < j->ncomm; i++)
        moved |= v->nm[i].nop[GTR_OP_SEND] || v->nm[i].nop[GTR_OP_RECV];
    fprintf(f, "   p50: the median over the communicator's processes of each one's p50.\n");
    if (moved)
        fprintf(f, "   send, recv: from the post (isend/irecv) to the test() that finds it done,\n"
                   "   which includes waiting for the peer: milliseconds there are normal.\n");
    if (all)
        fprintf(f, "   *: differs from the communicator's majority (verdict, fallbacks, errors, "
                   "p50 outlier)\n");
}

void gt_sum_comms(FILE *f, const struct gt_job *j, int flags)
{
    int all = flags & GT_REPORT_RANKS;
    struct comms_view v = {0};
    if (comms_view(j, all, &v)) {
        fprintf(f, "gdrtrace: out of memory for the communicators\n");
        comms_view_free(&v);
        return;
    }
    fprintf(f,
            "\n== communicators: %zu; %zu process(es) differ from their communicator's majority\n",
            j->ncomm, v.differing);
    fprintf(f, "   %-20s %6s %5s %-15s %9s %9s %9s\n", "comm", "procs", "nodes", "verdict",
            "reg p50", "send p50", "recv p50");
    size_t listed = 0;
    for (size_t i = 0; i < j->ncomm; i++) {
        if (v.grp[i] != SIZE_MAX && v.g[v.grp[i]].first != i)
            continue; /* shown with its group */
        if (v.ndiff[i] && !all && listed++ >= GT_REPORT_LIST_MAX)
            continue;
        comm_entry(f, j, &v, i, all);
    }
    if (!all && listed > GT_REPORT_LIST_MAX)
        fprintf(f,
                "   and %zu more communicator(s) where processes differ (gdrtrace summary "
                "--ranks)\n",
                listed - GT_REPORT_LIST_MAX);
    comms_notes(f, j, &v, all);
    comms_view_free(&v);
}
