/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ab.h — the A/B's three groups (tools/lib/ab.h) as JSON.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_AB_H
#define GDRTRACE_TOOLS_RENDER_JSON_AB_H

#include "tools/lib/ab.h"
#include "tools/render/json.h"

/* "three_groups": {...}, "conclusion": "..." inside the current object. */
void gt_ab_json(struct gt_json *js, const struct gt_ab *ab);
/* summary's "three_groups": {...} (only when some recorder has a host section). */
void gt_ab_summary_json(struct gt_json *js, const struct gt_job *j);

#endif
