/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_nccljoin.c — the JSON of NCCL's log joined to the recorders
 * (tools/lib/nccljoin.h): a communicator's NCCL fields and the "nccl_log"
 * object.  A function of the join only; keys and their order are the
 * documented output (docs/reader.md), so they change only with it.
 */
#include "tools/render/json_nccljoin.h"

void gt_nccl_join_json_comm(struct gt_json *js, const struct gt_nj_comm *c)
{
    gj_str(js, "source", !c->in_log ? "recorder" : c->ccomm >= 0 ? "both" : "nccl-log");
    gj_str(js, "nccl_kind", gt_nj_kind_name(c->kind));
    gj_str(js, "joined_by", c->joined_by);
    if (!c->in_log)
        return;
    gj_obj(js, "nccl");
    gj_i64(js, "nranks", c->nranks);
    gj_i64(js, "ranks_seen", c->ranks_seen);
    gj_i64(js, "nnodes", c->nnodes);
    gj_i64(js, "nhosts", c->nhosts);
    gj_str(js, "hosts", c->hosts);
    gj_str(js, "network", c->net);
    gj_obj(js, "channels");
    for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
        gj_u64(js, gt_nlog_ch_name(k), c->ch[k]);
    gj_u64(js, "gdrdma", c->ch_gdrdma);
    gj_u64(js, "ambiguous", c->amb);
    gj_end(js, '}');
    gj_u64(js, "gdr_enabled", c->gdr_on);
    gj_u64(js, "gdr_disabled", c->gdr_off);
    gj_end(js, '}');
}

void gt_nccl_join_json(struct gt_json *js, const struct gt_nccl_join *nj)
{
    const struct gt_nlog *l = nj->log;
    gj_obj(js, "nccl_log");
    gj_u64(js, "files", l->files);
    gj_u64(js, "lines", l->lines);
    gj_u64(js, "nccl_lines", l->nccl_lines);
    gj_u64(js, "used", l->used);
    gj_u64(js, "unused", l->unused);
    gj_u64(js, "foreign", l->foreign);
    gj_u64(js, "binary", l->binary);
    gj_u64(js, "too_long", l->too_long);
    gj_u64(js, "dropped", l->dropped);
    gj_u64(js, "channels", l->channels);
    gj_u64(js, "unattributed", l->unattributed - nj->by_order);
    gj_u64(js, "ambiguous", l->ambiguous - nj->by_order);
    gj_u64(js, "by_order", nj->by_order);
    gj_arr(js, "processes");
    for (size_t pi = 0; pi < l->nproc; pi++) {
        const struct gt_nlog_proc *p = &l->procs[pi];
        gj_obj(js, NULL);
        gj_str(js, "host", p->host);
        gj_i64(js, "pid", p->pid);
        gj_str(js, "nccl_version", p->version);
        gj_str(js, "plugin", gt_nlog_plugin_name(p->plugin));
        gj_str(js, "plugin_name", p->plugin_name);
        gj_i64(js, "plugin_abi", p->plugin_abi);
        gj_str(js, "plugin_line", p->quote_plugin);
        gj_str(js, "net_line", p->quote_net);
        gj_i64(js, "communicators", p->ncomm);
        gj_arr(js, "gdr");
        for (uint32_t g = 0; g < p->ngdr; g++) {
            gj_obj(js, NULL);
            gj_str(js, "kind", p->gdr[g].kind ? "hca" : "gpu-hca");
            gj_bool(js, "enabled", p->gdr[g].enabled);
            gj_str(js, "gpu", p->gdr[g].gpu);
            gj_str(js, "hca", p->gdr[g].hca);
            gj_i64(js, "distance", p->gdr[g].distance);
            gj_i64(js, "level", p->gdr[g].level);
            gj_u64(js, "count", p->gdr[g].count);
            gj_str(js, "line", p->gdr[g].quote);
            gj_end(js, '}');
        }
        gj_end(js, ']');
        gj_obj(js, "unattributed");
        for (int k = 0; k < GT_NLOG_CH_COUNT; k++)
            gj_u64(js, gt_nlog_ch_name(k), p->unattributed[k]);
        gj_end(js, '}');
        gj_str(js, "unattributed_line", p->quote_unattr);
        gj_u64(js, "by_order", nj->order[pi].lines);
        gj_str(js, "not_by_order", nj->order[pi].why);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "verdicts");
    for (size_t i = 0; i < nj->nproc; i++) {
        gj_obj(js, NULL);
        gj_str(js, "host", nj->procs[i].host);
        gj_i64(js, "pid", nj->procs[i].pid);
        gj_str(js, "verdict", gt_verdict_name(nj->procs[i].code));
        gj_str(js, "why", nj->procs[i].why);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_end(js, '}');
}
