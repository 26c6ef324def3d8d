/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ls.c — the keys of `gdrtrace ls --json` (docs/reader.md): an array,
 * one object per recorder with its identity, state, owner, size and fate
 * ("" when none); strings as read, escaped by the JSON writer only.
 */
#include "tools/render/json_ls.h"

#include "tools/render/json.h"
#include "tools/render/json_summary.h"

void gt_json_ls(FILE *f, const struct gt_recfile *recs, struct gt_fate *const *fates, size_t n)
{
    struct gt_json js;
    gj_init(&js, f);
    gj_arr(&js, NULL);
    for (size_t i = 0; i < n; i++) {
        const struct gt_recfile *r = &recs[i];
        gj_obj(&js, NULL);
        gj_str(&js, "source", r->source);
        gj_str(&js, "host", r->id.host);
        gj_i64(&js, "pid", r->id.pid);
        gj_str(&js, "job", r->id.job);
        gj_i64(&js, "rank", r->id.rank);
        gj_str(&js, "state", gt_liveness_name(r->liveness));
        gt_json_owner(&js, r);
        gj_str(&js, "state_why", r->liveness_why ? r->liveness_why : "");
        gj_u64(&js, "size", r->size);
        gj_i64(&js, "start_wall_ns", r->id.start_wall_ns);
        gj_str(&js, "fate", fates[i] ? fates[i]->text : "");
        gj_end(&js, '}');
    }
    gj_end(&js, ']');
    gj_done(&js);
}
