/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_verdict.c — the keys of `gdrtrace verdict --json` (docs/reader.md):
 * communicators, processes, nodes, NCCL's log when joined, all, expect,
 * next, unreadable_inputs, exit.  Every communicator and node is listed
 * (no alike lines here: a program reads them all).
 */
#include "tools/render/json_verdict.h"

#include "tools/render/json.h"
#include "tools/render/json_nccljoin.h"

static void comms(struct gt_json *js, const struct gt_verdict_doc *d)
{
    const struct gt_job *j = d->j;
    const struct gt_nccl_join *nj = d->nj;
    gj_arr(js, "communicators");
    for (size_t i = 0; nj && i < nj->ncomm; i++) {
        const struct gt_nj_comm *x = &nj->comms[i];
        gj_obj(js, NULL);
        gj_str(js, "comm", x->label);
        gj_u64(js, "processes", x->ccomm >= 0 ? j->comms[x->ccomm].nprocs : x->nprocs);
        gj_i64(js, "hosts", x->ccomm >= 0 ? j->comms[x->ccomm].nhosts : x->nhosts);
        gj_str(js, "verdict", gt_nj_label(x));
        gj_str(js, "why", d->why ? d->why[i] : x->why);
        gt_nccl_join_json_comm(js, x);
        gj_end(js, '}');
    }
    for (size_t i = 0; !nj && i < j->ncomm; i++) {
        gj_obj(js, NULL);
        gj_str(js, "comm", j->comms[i].label);
        gj_u64(js, "processes", j->comms[i].nprocs);
        gj_i64(js, "hosts", j->comms[i].nhosts);
        gj_str(js, "verdict", gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated));
        gj_str(js, "why", d->why ? d->why[i] : j->comms[i].v.why);
        gj_end(js, '}');
    }
    gj_end(js, ']');
}

static void procs_nodes(struct gt_json *js, const struct gt_job *j)
{
    int emu = j->overall.emulated;
    gj_arr(js, "processes");
    for (size_t i = 0; i < j->nfates; i++) {
        const struct gt_recfile *r = &j->recs[j->fates[i].rec];
        gj_obj(js, NULL);
        gj_str(js, "host", r->id.host);
        gj_i64(js, "pid", r->id.pid);
        gj_i64(js, "rank", r->id.rank);
        gj_str(js, "job", r->id.job);
        gj_str(js, "verdict", gt_verdict_label(j->fates[i].f.code, emu));
        gj_str(js, "why", j->fates[i].f.text);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "nodes");
    for (size_t i = 0; i < j->nnodes; i++) {
        gj_obj(js, NULL);
        gj_str(js, "host", j->nodes[i].host);
        gj_i64(js, "processes", j->nodes[i].nproc);
        gj_i64(js, "comms", j->nodes[i].ncomm);
        gj_str(js, "verdict", gt_verdict_label(j->nodes[i].code, emu));
        gj_end(js, '}');
    }
    gj_end(js, ']');
}

void gt_json_verdict(FILE *f, const struct gt_verdict_doc *d)
{
    const struct gt_job *j = d->j;
    int emu = j->overall.emulated;
    struct gt_json js;
    gj_init(&js, f);
    gj_obj(&js, NULL);
    comms(&js, d);
    procs_nodes(&js, j);
    if (d->nj)
        gt_nccl_join_json(&js, d->nj);
    gj_obj(&js, "all");
    gj_str(&js, "verdict", gt_verdict_label(d->code, emu));
    if (emu)
        gj_str(&js, "emulated", GT_EMULATED_TEXT);
    gj_str(&js, "why", d->nj ? d->nj->why : j->overall.why);
    gj_end(&js, '}');
    if (d->expect >= 0) {
        gj_str(&js, "expect", gt_verdict_name(d->expect));
        gj_bool(&js, "expect_met", d->expect_met);
    }
    gj_str(&js, "next", d->next);
    gj_i64(&js, "unreadable_inputs", d->unreadable);
    gj_i64(&js, "exit", d->exit_code);
    gj_end(&js, '}');
    gj_done(&js);
}
