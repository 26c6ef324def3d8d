/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ab.c — the A/B's three groups as JSON: diff's "three_groups" and
 * "conclusion", and summary's "three_groups" of one job (the job, every
 * node, every communicator).  Invariant: values the model does not know are
 * null, never a made-up number.
 */
#include "tools/render/json_ab.h"

#include <math.h>
#include <stdlib.h>

#include "tools/lib/coll.h"
#include "tools/lib/hist.h"
#include "tools/render/json_hostp.h"

static void num(struct gt_json *js, const char *key, double v)
{
    if (isnan(v) || isinf(v))
        gj_null(js, key);
    else
        gj_dbl(js, key, v);
}

/* a change on the compared scale as a relative change (log rows) */
static double rel(const struct gt_ab_row *r, double x)
{
    return r->logscale ? exp(x) - 1 : x;
}

void gt_ab_json(struct gt_json *js, const struct gt_ab *ab)
{
    gj_obj(js, "statistics");
    gj_i64(js, "runs_a", ab->k[0]);
    gj_i64(js, "runs_b", ab->k[1]);
    gj_str(js, "test", "Welch's t over per-run values (log scale for positive figures)");
    gj_str(js, "multiple_rows", "Holm over the effect rows");
    gj_dbl(js, "false_alarm_rate", ab->alpha);
    gj_i64(js, "effect_rows", ab->nfamily);
    gj_bool(js, "noise_known", ab->k[0] >= 2 && ab->k[1] >= 2);
    gj_end(js, '}');
    gj_obj(js, "three_groups");
    for (int g = 0; g < GT_AB_GROUPS; g++) {
        static const char *const key[] = {"application_slo", "evidence", "host_pressure"};
        gj_obj(js, key[g]);
        if (g == GT_AB_SLO) {
            gj_bool(js, "recorded", ab->slo != GT_AB_NA);
            gj_bool(js, "collectives_recorded", !ab->slo_why[0]);
            if (ab->slo_why[0])
                gj_str(js, "why", ab->slo_why);
        }
        if (g == GT_AB_HOST) {
            gt_hostp_json(js, "a", &ab->hostp[0]);
            gt_hostp_json(js, "b", &ab->hostp[1]);
        }
        gj_arr(js, "rows");
        for (int i = 0; i < ab->nrow; i++) {
            const struct gt_ab_row *r = &ab->row[i];
            if (r->group != g)
                continue;
            gj_obj(js, NULL);
            gj_str(js, "name", r->name);
            gj_str(js, "role", gt_ab_role_name(r->role));
            gj_bool(js, "evidence", r->family);
            gj_str(js, "a", r->a);
            gj_str(js, "b", r->b);
            num(js, "a_value", r->va);
            num(js, "b_value", r->vb);
            gj_i64(js, "a_runs", r->na);
            gj_i64(js, "b_runs", r->nb);
            gj_str(js, "delta", r->delta);
            gj_str(js, "scale", r->logscale ? "ratio" : "difference");
            num(js, "change", r->fmt == GT_AB_F_TEXT ? NAN : rel(r, r->diff));
            num(js, "interval_low", rel(r, r->lo));
            num(js, "interval_high", rel(r, r->hi));
            num(js, "interval_miss_level", r->level);
            num(js, "p", r->p);
            gj_bool(js, "below_resolution", r->below_floor);
            gj_str(js, "state", gt_ab_state_name(r->state));
            gj_end(js, '}');
        }
        gj_end(js, ']');
        gj_end(js, '}');
    }
    gj_bool(js, "mechanism_changed", ab->mechanism);
    gj_str(js, "host_pressure_change", gt_ab_state_name(ab->host));
    gj_str(js, "application_slo_change", gt_ab_state_name(ab->slo));
    gj_bool(js, "emulated_a", ab->emulated[0]);
    gj_bool(js, "emulated_b", ab->emulated[1]);
    num(js, "copier_share_a", ab->copier_share[0]);
    num(js, "copier_share_b", ab->copier_share[1]);
    gj_end(js, '}');
    gj_str(js, "rule", ab->rule);
    gj_str(js, "conclusion", ab->conclusion);
}

/* ---- summary's view ---------------------------------------------------- */

static void slo_json(struct gt_json *js, const struct gt_job *j, uint64_t comm_id)
{
    struct gt_ab_slo *s = malloc(sizeof(*s));
    if (!s)
        return;
    gt_ab_slo_of(j, comm_id, s);
    gj_obj(js, "application_slo");
    gj_bool(js, "recorded", s->recorded);
    if (!s->recorded)
        gj_str(js, "why", s->why);
    else {
        if (s->init_ns >= 0)
            gj_i64(js, "init_ns", s->init_ns);
        else
            gj_null(js, "init_ns");
        gj_arr(js, "functions");
        for (int fn = 0; fn < GTR_COLL_FUNC_COUNT; fn++) {
            const struct gt_ab_slo_fn *q = &s->fn[fn];
            if (!q->present)
                continue;
            gj_obj(js, NULL);
            gj_str(js, "function", gt_coll_func_name(fn));
            gj_u64(js, "timed", q->h.count);
            gj_u64(js, "p50_ns", gt_hist_quantile(&q->h, 0.5));
            gj_u64(js, "p95_ns", gt_hist_quantile(&q->h, 0.95));
            gj_u64(js, "p99_ns", gt_hist_quantile(&q->h, 0.99));
            double g = gt_ab_slo_gbs(q);
            if (isnan(g))
                gj_null(js, "algbw_gbs");
            else
                gj_dbl(js, "algbw_gbs", g);
            gj_end(js, '}');
        }
        gj_end(js, ']');
    }
    gj_end(js, '}');
    free(s);
}

void gt_ab_summary_json(struct gt_json *js, const struct gt_job *j)
{
    if (!gt_hostp_recorded(j))
        return;
    struct gt_hostp h;
    gj_obj(js, "three_groups");
    slo_json(js, j, UINT64_MAX);
    gt_hostp_of_job(j, &h);
    gt_hostp_json(js, "host_pressure", &h);
    gj_arr(js, "nodes");
    for (size_t i = 0; i < j->nnodes; i++) {
        gj_obj(js, NULL);
        gj_str(js, "host", j->nodes[i].host);
        gj_str(js, "verdict", gt_verdict_label(j->nodes[i].code, j->overall.emulated));
        gt_hostp_of_node(j, j->nodes[i].host, &h);
        gt_hostp_json(js, "host_pressure", &h);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_arr(js, "communicators");
    for (size_t i = 0; i < j->ncomm; i++) {
        gj_obj(js, NULL);
        gj_str(js, "comm", j->comms[i].label);
        gj_str(js, "verdict", gt_verdict_label(j->comms[i].v.code, j->comms[i].v.emulated));
        if (j->comms[i].has_comm_id == 1)
            slo_json(js, j, j->comms[i].comm_id);
        gt_hostp_of_comm(j, i, &h);
        gt_hostp_json(js, "host_pressure", &h);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_end(js, '}');
}
