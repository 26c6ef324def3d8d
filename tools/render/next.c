/* SPDX-License-Identifier: Apache-2.0 */
/*
 * next.c — the next step for an outcome (next.h).  Invariant: one step, the
 * first gate of docs/runbook-gates.md that the outcome leaves open, naming a
 * node or process of this job where one is the place to look.
 */
#include "tools/render/next.h"

#include <string.h>

#include "tools/lib/esc.h"
#include "tools/lib/recfact.h"
#include "tools/render/text.h"

/* The first node (natural order) whose verdict is code, else the first node. */
static const char *node_with(const struct gt_job *j, int code)
{
    for (size_t i = 0; i < j->nnodes; i++)
        if (j->nodes[i].code == code)
            return j->nodes[i].host;
    return j->nnodes ? j->nodes[0].host : "a node";
}

void gt_next_step(const struct gt_job *j, char **paths, int npaths, char *buf, size_t n)
{
    char p[512] = "";
    for (int i = 0; i < npaths && strlen(p) + 2 < sizeof(p); i++)
        snprintf(p + strlen(p), sizeof(p) - strlen(p), " %s", gt_esc(paths[i]));
    int code = j->nrec ? j->overall.code : GT_V_NO_DATA;
    const struct gt_recfile *r0 = j->nrec ? &j->recs[0] : NULL;
    int reg = r0 ? r0->reg_mode : -1; /* enum gt_reg_mode */
    const char *node = gt_esc(node_with(j, code));
    switch (code) {
    case GT_V_DIRECT_DMABUF:
        if (j->overall.emulated)
            snprintf(buf, n,
                     "emulated (no NIC): rerun on nodes with an RDMA NIC; gdrtrace doctor "
                     "first (gates 1-2)");
        else
            snprintf(buf, n, "compare with a baseline run (gate 4): gdrtrace diff BASE%s", p);
        break;
    case GT_V_DIRECT_PEERMEM:
        if (reg == GT_REG_PEERMEM)
            snprintf(buf, n,
                     "peermem baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace diff%s "
                     "DMABUF-RUN",
                     p[0] ? p : " BASE");
        else
            snprintf(buf, n,
                     "why not DMA-BUF: gdrtrace doctor on %s (gates 1-2; NCCL_DMABUF_ENABLE)",
                     node);
        break;
    case GT_V_HOST_STAGED:
        if (reg == GT_REG_HOST)
            snprintf(buf, n,
                     "host-memory baseline: rerun with GDRTRACE_REG=dmabuf, then gdrtrace "
                     "diff%s DMABUF-RUN",
                     p[0] ? p : " BASE");
        else if (r0 && gt_rec_sock(r0))
            snprintf(buf, n,
                     "no RDMA NIC was used (transport sock): gdrtrace doctor on %s (gate 1)", node);
        else
            snprintf(buf, n,
                     "NCCL kept GPU memory off the NIC: gdrtrace doctor on %s (gates 1-2), then "
                     "NCCL's GDR level",
                     node);
        break;
    case GT_V_MIXED:
        snprintf(buf, n, "gdrtrace summary%s shows which communicators and processes differ", p);
        break;
    case GT_V_FALLBACK: {
        const char *host = node;
        for (size_t i = 0; i < j->nranks; i++)
            if (j->ranks[i].fallbacks) {
                host = gt_esc(j->recs[j->ranks[i].rec].id.host);
                break;
            }
        snprintf(buf, n, "gdrtrace summary%s names who fell back; gdrtrace doctor on %s (gate 2)",
                 p, host);
        break;
    }
    case GT_V_ERROR: {
        const struct gt_pfate *died = NULL;
        for (size_t i = 0; i < j->nfates && !died; i++)
            if (j->fates[i].f.code == GT_V_ERROR)
                died = &j->fates[i];
        if (died)
            snprintf(buf, n,
                     "the core dump and the called library's log: %s pid %d (it died in "
                     "that call)",
                     gt_esc(j->recs[died->rec].id.host), j->recs[died->rec].id.pid);
        else
            snprintf(buf, n,
                     "failing calls and errnos: gdrtrace summary --full --events%s; gdrtrace "
                     "doctor on %s",
                     p, node);
        break;
    }
    case GT_V_BYPASSED:
        snprintf(buf, n,
                 "fix what the plugin refused (reason above): gdrtrace doctor on %s (gate 1)",
                 node);
        break;
    default: /* NO-DATA */
        if (!j->nrec && j->empty_why[0])
            snprintf(buf, n, "%s", j->empty_why);
        else if (!j->nrec)
            snprintf(buf, n,
                     "likely NCCL did not load the plugin (NCCL_DEBUG=INFO: NET/Plugin) or "
                     "another GDRTRACE_DIR");
        else
            snprintf(buf, n,
                     "likely no network connection yet (one node: NCCL used P2P/SHM); run "
                     "across 2+ nodes");
        break;
    }
}

void gt_report_next(FILE *f, const char *ind, const struct gt_job *j, char **paths, int npaths)
{
    char buf[1024];
    gt_next_step(j, paths, npaths, buf, sizeof(buf));
    fprintf(f, "%snext: ", ind);
    gt_report_wrap(f, (int)strlen(ind) + 6, (int)strlen(ind) + 6, buf);
}
