/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nccljoin_order.c — the join's step 3b (nccljoin.h): a process's ambiguous
 * NET/gdrtrace channel lines given by the order of its connection phases
 * against its recorder's connection runs.  All or nothing per process: a
 * plan that does not use every phase and every run gives no line, and says
 * why (gt_nj_order.why), so an attribution is never a guess.
 */
#include <stdio.h>

#include "tools/lib/nccljoin_int.h"

static uint32_t ours_lines(const uint32_t *ch)
{
    return ch[GT_NLOG_CH_NET_OURS] + ch[GT_NLOG_CH_COLLNET_OURS];
}

/* The record of process p whose key is commId id: -1 none, -2 several. */
static int32_t record_of(const struct gt_nlog *l, const struct rkey *k,
                         const struct gt_nlog_proc *p, uint64_t id)
{
    int32_t rec = -1;
    for (int32_t i = p->first_comm; i >= 0; i = l->comms[i].prev)
        if (k[i].is_id && k[i].key == id)
            rec = rec == -1 ? i : -2;
    return rec;
}

/* Why process pi's ambiguous NET/gdrtrace lines cannot be given by order
 * (why set, -1), or the record of each of its gdrtrace phases in tgt[]
 * (0).  tgt has GT_NLOG_MAX_PHASES entries.
 *
 * The recorder's runs are matched to the log's gdrtrace phases in order,
 * each run taking the consecutive phases whose [receive] and [send] lines
 * are as many as its listen and connect events (NCCL: one listen a
 * [receive] line, one connect a [send] line; a communicator connected
 * twice in a row, rings then trees, is one run and two phases).  The
 * partition is unique (a phase has a line at least), and it must use
 * every phase and every run. */
static int order_plan(const struct ctx *x, const struct rkey *k, size_t pi, int32_t *tgt, char *why,
                      size_t n)
{
    const struct gt_nlog *l = x->l;
    const struct gt_job *j = x->j;
    const struct gt_nlog_proc *p = &l->procs[pi];
    if (p->phase_dropped) {
        snprintf(why, n, "over %d connection phases", GT_NLOG_MAX_PHASES);
        return -1;
    }
    size_t r0 = rproc_find(x->rp, x->nrp, p->host, p->pid), nr = 0;
    for (size_t r = r0; r < x->nrp && !rproc_cmp(&x->rp[r], &x->rp[r0]); r++)
        nr++;
    if (nr != 1) {
        snprintf(why, n, nr ? "%zu recorders of the process" : "no recorder of the process", nr);
        return -1;
    }
    size_t ri = x->rp[r0].rec, d0 = x->rank_start[ri], d1 = x->rank_start[ri + 1];
    uint32_t nruns = d0 < d1 ? j->ranks[d0].conn_nruns : 0;
    for (size_t d = d0; d < d1; d++)
        if (j->ranks[d].conn_lost) {
            snprintf(why, n,
                     "its recorder lost connection events (event ring overwritten, or "
                     "GDRTRACE_EVENTS)");
            return -1;
        }
    if (nruns > GT_CONN_RUNS_MAX) {
        snprintf(why, n, "over %d connection runs in its recorder", GT_CONN_RUNS_MAX);
        return -1;
    }
    int32_t ph[GT_NLOG_MAX_PHASES]; /* the gdrtrace phases, in order */
    uint32_t m = 0;
    for (int32_t h = p->phase_first; h >= 0; h = l->phases[h].next) {
        const struct gt_nlog_phase *f = &l->phases[h];
        if (!ours_lines(f->ch))
            continue;
        if (m && f->tid != l->phases[ph[0]].tid) {
            snprintf(why, n, "NET/gdrtrace channel lines on several threads");
            return -1;
        }
        if (f->ch[GT_NLOG_CH_NET_OTHER] + f->ch[GT_NLOG_CH_COLLNET_OTHER]) {
            snprintf(why, n, "a connection phase mixes NET/gdrtrace and another network's lines");
            return -1;
        }
        if (f->ch[GT_NLOG_CH_COLLNET_OURS]) { /* collnet connections are not runs we count */
            snprintf(why, n, "CollNet lines via gdrtrace");
            return -1;
        }
        ph[m++] = h;
    }
    uint32_t i = 0;
    for (uint32_t q = 0; q < nruns; q++) {
        const struct gt_rank_comm *rd = NULL;
        const struct gt_conn_run *run = NULL;
        for (size_t d = d0; d < d1 && !run; d++)
            for (uint32_t c = 0; c < j->ranks[d].conn_n && !run; c++)
                if (j->conn[j->ranks[d].conn_at + c].k == q) {
                    rd = &j->ranks[d];
                    run = &j->conn[rd->conn_at + c];
                }
        if (!run || rd->has_comm_id != 1) {
            snprintf(why, n, "its recorder holds no commId (net ABI <= v10)");
            return -1;
        }
        int32_t rec = record_of(l, k, p, rd->comm_id);
        if (rec < 0) {
            snprintf(why, n, "connection run %u's communicator 0x%llx has %s record in its log",
                     q + 1, (unsigned long long)rd->comm_id, rec == -1 ? "no" : "more than one");
            return -1;
        }
        uint32_t start = i, rl = 0, sl = 0;
        while (i < m && (rl < run->listens || sl < run->connects)) {
            rl += l->phases[ph[i]].ours_recv;
            sl += l->phases[ph[i]].ours_send;
            i++;
        }
        if (i == start || rl != run->listens || sl != run->connects) {
            snprintf(why, n,
                     "connection run %u (0x%llx: %u listen, %u connect event(s)) is no run of "
                     "NCCL's connection phases from phase %u (%u [receive], %u [send] line(s))",
                     q + 1, (unsigned long long)rd->comm_id, run->listens, run->connects, start + 1,
                     rl, sl);
            return -1;
        }
        for (uint32_t a = start; a < i; a++) {
            const struct gt_nlog_phase *f = &l->phases[ph[a]];
            if (f->rec == -2 || (f->rec >= 0 && f->rec != rec)) {
                snprintf(why, n,
                         "connection phase %u has lines of another communicator than connection "
                         "run %u's (0x%llx)",
                         a + 1, q + 1, (unsigned long long)rd->comm_id);
                return -1;
            }
            int in = !ours_lines(f->amb);
            for (int c = 0; c < f->ncand && !in; c++)
                in = f->cand[c] == rec;
            if (ours_lines(f->amb) && (!in || f->cand_differ)) {
                snprintf(why, n,
                         "connection phase %u's lines could not be communicator 0x%llx's (its "
                         "recorder's connection run %u)",
                         a + 1, (unsigned long long)rd->comm_id, q + 1);
                return -1;
            }
            tgt[a] = rec;
        }
    }
    if (i != m) {
        snprintf(why, n,
                 "%u connection phase(s) via NET/gdrtrace in NCCL's log, %u connection run(s) in "
                 "its recorder matching %u of them",
                 m, nruns, i);
        return -1;
    }
    return 0;
}

void gt_nj_by_order(const struct ctx *x, const struct rkey *k, struct gt_nccl_join *out)
{
    const struct gt_nlog *l = x->l;
    int32_t tgt[GT_NLOG_MAX_PHASES];
    for (size_t pi = 0; pi < l->nproc; pi++) {
        const struct gt_nlog_proc *p = &l->procs[pi];
        struct gt_nj_order *o = &out->order[pi];
        uint32_t amb = p->phase_dropped;
        for (int32_t h = p->phase_first; h >= 0 && !amb; h = l->phases[h].next)
            amb = ours_lines(l->phases[h].amb);
        if (!amb || order_plan(x, k, pi, tgt, o->why, sizeof(o->why)))
            continue;
        uint32_t kth = 0;
        for (int32_t h = p->phase_first; h >= 0; h = l->phases[h].next) {
            const struct gt_nlog_phase *ph = &l->phases[h];
            if (!ours_lines(ph->ch))
                continue;
            struct rextra *e = &x->ex[tgt[kth++]];
            uint32_t given = ours_lines(ph->amb);
            if (!given)
                continue;
            e->ch[GT_NLOG_CH_NET_OURS] += ph->amb[GT_NLOG_CH_NET_OURS];
            e->ch[GT_NLOG_CH_COLLNET_OURS] += ph->amb[GT_NLOG_CH_COLLNET_OURS];
            e->gdrdma += ph->amb_gdrdma; /* no other network in the phase: all gdrtrace */
            for (int a = 0; a < ph->ncand; a++)
                x->ex[ph->cand[a]].amb_resolved += given;
            o->lines += given;
            out->by_order += given;
        }
    }
}
