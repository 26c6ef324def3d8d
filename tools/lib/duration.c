/* SPDX-License-Identifier: Apache-2.0 */
/* duration.c — see duration.h.  Pure functions; no state. */
#include <ctype.h>
#include <stdint.h>

#include "tools/lib/duration.h"

/* Strict: digits then exactly one unit; no sign, no space, no fraction. */
int gt_parse_duration(const char *s, int64_t *ns)
{
    static const struct {
        char unit;
        int64_t sec;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}};
    const char *p = s;
    int64_t v = 0;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        if (v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (!p[0] || p[1])
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (*p != units[i].unit)
            continue;
        if (v > INT64_MAX / units[i].sec / 1000000000)
            return -1;
        *ns = v * units[i].sec * 1000000000;
        return 0;
    }
    return -1;
}

int64_t gt_last_activity_ns(const struct gt_recfile *r, int64_t now)
{
    int64_t start = r->id.start_wall_ns, t = start;
    if (r->hdr.state == GTR_STATE_CLOSED && r->id.end_wall_ns > 0) {
        t = r->id.end_wall_ns;
    } else if (r->has_ring) {
        struct gtr_event ev;
        uint64_t pos = 0, last_ts = 0;
        int any = 0;
        while (gt_recfile_event_next(r, &pos, &ev)) {
            last_ts = ev.ts;
            any = 1;
        }
        double rel = any ? gt_recfile_ts_rel_s(r, last_ts) : 0;
        if (rel > 0 && rel < 1e10)
            t = start + (int64_t)(rel * 1e9);
    }
    if (t < start)
        t = start;
    return t > now ? now : t;
}
