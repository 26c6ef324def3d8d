/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_diff.c — the keys of `gdrtrace diff --json` (docs/reader.md):
 * comparable, differences, a and b (each side's counts and latency), the
 * latency ratio B/A per operation and point (null where a side has none),
 * then the runbook's groups (gt_ab_json).
 */
#include "tools/render/json_diff.h"

#include "tools/lib/hist.h"
#include "tools/render/json.h"
#include "tools/render/json_ab.h"
#include "tools/render/json_summary.h"

const char *const gt_diff_qname[GT_DIFF_NQ] = {"p50", "p95", "p99", "max"};

uint64_t gt_diff_qval(const struct gtr_hist *h, int q)
{
    static const double qv[GT_DIFF_NQ] = {0.5, 0.95, 0.99, 1.0};
    return q == 3 ? h->max_ns : gt_hist_quantile(h, qv[q]);
}

static void side(struct gt_json *js, const char *key, const struct gt_diff_side *s)
{
    gj_obj(js, key);
    gj_str(js, "path", s->path);
    gj_u64(js, "processes", s->nproc);
    gj_i64(js, "hosts", s->job->nhosts);
    gj_str(js, "policy_reg", s->policy_reg);
    gj_str(js, "verdict", gt_verdict_label(s->job->overall.code, s->job->overall.emulated));
    gt_json_comm_counts(js, s->tot);
    gt_json_latency(js, s->tot);
    gj_end(js, '}');
}

void gt_json_diff(FILE *f, const struct gt_diff_doc *d)
{
    struct gt_json js;
    gj_init(&js, f);
    gj_obj(&js, NULL);
    gj_bool(&js, "comparable", d->nwarn == 0);
    gj_arr(&js, "differences");
    for (int i = 0; i < d->nwarn; i++)
        gj_str(&js, NULL, d->warn[i]);
    gj_end(&js, ']');
    side(&js, "a", &d->side[0]);
    side(&js, "b", &d->side[1]);
    gj_obj(&js, "latency_ratio_b_over_a");
    for (int op = 0; op < GTR_OP_COUNT; op++) {
        gj_obj(&js, gt_op_name(op));
        for (int q = 0; q < GT_DIFF_NQ; q++) {
            uint64_t a = gt_diff_qval(&d->side[0].tot->hist[op], q);
            uint64_t b = gt_diff_qval(&d->side[1].tot->hist[op], q);
            if (a && b)
                gj_dbl(&js, gt_diff_qname[q], (double)b / (double)a);
            else
                gj_null(&js, gt_diff_qname[q]);
        }
        gj_end(&js, '}');
    }
    gj_end(&js, '}');
    gt_ab_json(&js, d->ab);
    gj_end(&js, '}');
    gj_done(&js);
}
