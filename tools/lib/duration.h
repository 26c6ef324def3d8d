/* SPDX-License-Identifier: Apache-2.0 */
/*
 * duration.h — the reader's strict durations (`prune --older-than`, `export
 * --exited-within`) and a recorder's last activity, shared so both commands
 * judge age the same way.
 */
#ifndef GT_TOOLS_DURATION_H
#define GT_TOOLS_DURATION_H
#include <stdint.h>

#include "tools/lib/model.h"

/* Digits then exactly one unit s, m, h, d or w; no sign, space or fraction.
 * 0 and *ns set, or -1 (not a duration, or overflow). */
int gt_parse_duration(const char *s, int64_t *ns);
/* Wall time (ns) of r's last activity: its end if closed, else its newest
 * event, else its start; never after now. */
int64_t gt_last_activity_ns(const struct gt_recfile *r, int64_t now);
#endif
