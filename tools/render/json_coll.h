/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_coll.h — the collective model (tools/lib/coll.h) as JSON.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_COLL_H
#define GDRTRACE_TOOLS_RENDER_JSON_COLL_H

#include "tools/lib/coll.h"
#include "tools/render/json.h"

/* "collectives": {...} (nothing when m is NULL). */
void gt_coll_json(struct gt_json *js, const struct gt_coll_model *m);

#endif
