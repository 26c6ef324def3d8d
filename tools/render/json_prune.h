/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_prune.h — `gdrtrace prune --json`: one object written as the folder
 * is pruned (begin, one item per file or run folder, end with the tallies),
 * so that a folder of any size needs no list in memory.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_PRUNE_H
#define GDRTRACE_TOOLS_RENDER_JSON_PRUNE_H

#include <stdint.h>

#include "tools/lib/recfile.h"
#include "tools/render/json.h"

/* One entry's outcome, as prune decided it. */
struct gt_prune_item {
    const char *path;
    const char *action; /* removed, would-remove, kept, failed */
    const char *state;  /* liveness name, or what the entry is */
    const char *reason;
    const struct gt_recfile *rec; /* NULL when not parsed: no job, pid */
    uint64_t size;
    int64_t age_s; /* -1 unknown: null */
};

struct gt_prune_totals {
    int dry;
    unsigned removed, kept, unreadable, failed;
    uint64_t bytes;
    int exit_code;
};

void gt_json_prune_begin(struct gt_json *js, FILE *f, const char *dir, int dry);
/* a recorder's item: every key */
void gt_json_prune_file(struct gt_json *js, const struct gt_prune_item *it);
/* a run folder's item: path, action, state, reason */
void gt_json_prune_run_dir(struct gt_json *js, const struct gt_prune_item *it);
void gt_json_prune_end(struct gt_json *js, const struct gt_prune_totals *t);

#endif
