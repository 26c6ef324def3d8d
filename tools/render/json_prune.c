/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_prune.c — the keys of `gdrtrace prune --json` (its --help lists
 * them): {dir, dry_run, files: [{path, action, state, reason, job, pid,
 * size, age_s}], removed|would_remove, kept, unreadable, failed, bytes,
 * exit}.
 */
#include "tools/render/json_prune.h"

void gt_json_prune_begin(struct gt_json *js, FILE *f, const char *dir, int dry)
{
    gj_init(js, f);
    gj_obj(js, NULL);
    gj_str(js, "dir", dir);
    gj_bool(js, "dry_run", dry);
    gj_arr(js, "files");
}

void gt_json_prune_file(struct gt_json *js, const struct gt_prune_item *it)
{
    gj_obj(js, NULL);
    gj_str(js, "path", it->path);
    gj_str(js, "action", it->action);
    gj_str(js, "state", it->state);
    gj_str(js, "reason", it->reason);
    if (it->rec) {
        gj_str(js, "job", it->rec->id.job);
        gj_i64(js, "pid", it->rec->id.pid);
    }
    gj_u64(js, "size", it->size);
    if (it->age_s >= 0)
        gj_i64(js, "age_s", it->age_s);
    else
        gj_null(js, "age_s");
    gj_end(js, '}');
}

void gt_json_prune_run_dir(struct gt_json *js, const struct gt_prune_item *it)
{
    gj_obj(js, NULL);
    gj_str(js, "path", it->path);
    gj_str(js, "action", it->action);
    gj_str(js, "state", it->state);
    gj_str(js, "reason", it->reason);
    gj_end(js, '}');
}

void gt_json_prune_end(struct gt_json *js, const struct gt_prune_totals *t)
{
    gj_end(js, ']');
    gj_u64(js, t->dry ? "would_remove" : "removed", t->removed);
    gj_u64(js, "kept", t->kept);
    gj_u64(js, "unreadable", t->unreadable);
    gj_u64(js, "failed", t->failed);
    gj_u64(js, "bytes", t->bytes);
    gj_i64(js, "exit", t->exit_code);
    gj_end(js, '}');
    gj_done(js);
}
