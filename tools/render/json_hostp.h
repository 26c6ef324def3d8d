/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_hostp.h — host pressure (tools/lib/hostp.h) as JSON.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_HOSTP_H
#define GDRTRACE_TOOLS_RENDER_JSON_HOSTP_H

#include "tools/lib/hostp.h"
#include "tools/render/json.h"

/* An object named key (or an array element when key is NULL). */
void gt_hostp_json(struct gt_json *js, const char *key, const struct gt_hostp *h);

#endif
