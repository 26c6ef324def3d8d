/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ls.c — the keys of `gdrtrace ls --json` (docs/reader.md): an array,
 * one object per recorder with its identity, state, owner, size and fate
 * ("" when none); strings as read, escaped by the JSON writer only.
 */
#include "tools/render/json_ls.h"

#include "tools/render/json.h"
#include "tools/lib/owner.h"
#include "tools/render/json_summary.h"

void gt_json_ls(FILE *f, const struct gt_ls_row *rows, size_t n)
{
    struct gt_json js;
    gj_init(&js, f);
    gj_arr(&js, NULL);
    for (size_t i = 0; i < n; i++) {
        const struct gt_ls_row *r = &rows[i];
        char o[64];
        gj_obj(&js, NULL);
        gj_str(&js, "source", r->source);
        gj_str(&js, "host", r->host);
        gj_i64(&js, "pid", r->pid);
        gj_str(&js, "job", r->job);
        gj_i64(&js, "rank", r->rank);
        gj_str(&js, "state", gt_liveness_name(r->liveness));
        gj_str(&js, "owner", gt_owner_short(r->owner, o, sizeof(o)));
        gj_i64(&js, "owner_uid", r->owner);
        gj_str(&js, "state_why", r->liveness_why ? r->liveness_why : "");
        gj_u64(&js, "size", r->size);
        gj_i64(&js, "start_wall_ns", r->start_wall_ns);
        gj_str(&js, "fate", r->fate ? r->fate : "");
        gj_end(&js, '}');
    }
    gj_end(&js, ']');
    gj_done(&js);
}
