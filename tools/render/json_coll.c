/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_coll.c — the collective model (tools/lib/coll.h) as summary's
 * "collectives" object.  Invariant: nothing when no recorder had the status
 * section; a size bucket that is no size (GTR_COLL_SIZE_ANY) is null.
 */
#include "tools/render/json_coll.h"

#include "common/hist.h"

/* One item of "operations": a cell (function x size) summed over ranks. */
static void json_cell(struct gt_json *js, const struct gt_coll_mcomm *c,
                      const struct gt_coll_mcell *x)
{
    const struct gtr_hist *h = &x->hist;
    char ap[40];
    gj_obj(js, NULL);
    gj_str(js, "function", gt_coll_func_name(x->func));
    if (x->size_log2 == GTR_COLL_SIZE_ANY)
        gj_null(js, "size_log2");
    else
        gj_i64(js, "size_log2", x->size_log2);
    gj_u64(js, "count", x->count);
    gj_u64(js, "bytes", x->bytes);
    gj_u64(js, "unsized", x->unsized);
    gj_u64(js, "timed", h->count);
    gj_u64(js, "sum_ns", h->sum_ns);
    gj_u64(js, "min_ns", h->count ? h->min_ns : 0);
    gj_u64(js, "max_ns", h->max_ns);
    gj_u64(js, "p50_ns", gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 50));
    gj_u64(js, "p95_ns", gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 95));
    gj_u64(js, "p99_ns", gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, 99));
    double alg, bus;
    gt_coll_bw(c, x, &alg, &bus);
    gj_dbl(js, "algbw_gbs", alg);
    gj_dbl(js, "busbw_gbs", bus);
    gt_coll_algo_proto(x, ap, sizeof(ap));
    gj_str(js, "algo_proto", ap);
    gj_obj(js, "algo_proto_mix");
    for (int a = 0; a < GTR_COLL_ALGOS; a++)
        for (int p = 0; p < GTR_COLL_PROTOS; p++)
            if (x->algo_proto[a][p]) {
                snprintf(ap, sizeof(ap), "%s_%s", gt_coll_algo_name(a), gt_coll_proto_name(p));
                gj_u64(js, ap, x->algo_proto[a][p]);
            }
    gj_end(js, '}');
    gj_arr(js, "histogram"); /* [lower bound ns, count] of each non-empty bucket */
    for (unsigned b = 0; b < GTR_HIST_BUCKETS; b++)
        if (h->buckets[b]) {
            gj_arr(js, NULL);
            gj_u64(js, NULL, gt_hist_bucket_lo(b));
            gj_u64(js, NULL, h->buckets[b]);
            gj_end(js, ']');
        }
    gj_end(js, ']');
    gj_end(js, '}');
}

/* One item of "communicators": who, the profiler, the times, its cells. */
static void json_comm(struct gt_json *js, const struct gt_coll_mcomm *c)
{
    char lab[48];
    gt_coll_comm_label(c, lab, sizeof(lab));
    gj_obj(js, NULL);
    gj_str(js, "comm", lab);
    gj_bool(js, "has_comm_id", c->has_id);
    gj_str(js, "comm_name", c->name);
    gj_i64(js, "nranks", c->nranks);
    gj_i64(js, "nnodes", c->nnodes);
    gj_i64(js, "processes", c->nprocs);
    gj_arr(js, "ranks");
    for (int k = 0; k < c->nranks_kept; k++)
        gj_i64(js, NULL, c->ranks[k]);
    gj_end(js, ']');
    gj_i64(js, "profiler_version", c->version);
    gj_str(js, "mode", gt_coll_mode_name(c->mode));
    gj_i64(js, "net_init_to_profiler_init_ns", c->netinit_max_ns);
    gj_i64(js, "init_to_first_operation_ns", c->first_max_ns);
    gj_u64(js, "busy_ns", c->busy_ns);
    gj_u64(js, "not_timed_inflight_full", c->inflight_full);
    gj_u64(js, "foreign_children", c->foreign);
    gj_u64(js, "stale_children", c->stale_child);
    gj_arr(js, "operations");
    for (size_t k = 0; k < c->ncell; k++)
        json_cell(js, c, &c->cells[k]);
    gj_end(js, ']');
    gj_end(js, '}');
}

void gt_coll_json(struct gt_json *js, const struct gt_coll_model *m)
{
    if (!m)
        return;
    gj_obj(js, "collectives");
    gj_i64(js, "processes", m->nstatus);
    gj_i64(js, "processes_with", m->nwith);
    gj_arr(js, "absent");
    for (int k = 0; k < m->nabsent; k++) {
        gj_obj(js, NULL);
        gj_str(js, "why", m->absent[k].why);
        gj_i64(js, "processes", m->absent[k].n);
        gj_str(js, "example", m->absent[k].example);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "communicators");
    for (size_t i = 0; i < m->ncomm; i++)
        json_comm(js, &m->comms[i]);
    gj_end(js, ']');
    gj_end(js, '}');
}
