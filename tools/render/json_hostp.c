/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_hostp.c — host pressure (tools/lib/hostp.h) as a JSON object.
 * Invariant: the figures only when some process recorded them ("recorded"
 * says which); a figure the model cannot give is null.
 */
#include "tools/render/json_hostp.h"

void gt_hostp_json(struct gt_json *js, const char *key, const struct gt_hostp *h)
{
    gj_obj(js, key);
    gj_bool(js, "recorded", h->nproc > 0);
    gj_u64(js, "processes", h->nproc);
    gj_u64(js, "processes_without", h->nproc_without);
    if (h->nproc) {
        gj_dbl(js, "cpu_seconds", h->cpu_s);
        gj_dbl(js, "cpu_user_seconds", h->user_s);
        gj_dbl(js, "cpu_system_seconds", h->sys_s);
        gj_dbl(js, "cpu_seconds_since_start", h->cpu_total_s);
        gj_dbl(js, "traced_seconds", h->window_s);
        gj_u64(js, "bytes_moved", h->bytes);
        if (h->nhelper) { /* format 1.7: only where a copier ran */
            gj_dbl(js, "helper_cpu_seconds", h->helper_s);
            gj_u64(js, "processes_with_helper", h->nhelper);
        }
        double gb = gt_hostp_cpu_per_gb(h), share = gt_hostp_share(h);
        if (gb >= 0)
            gj_dbl(js, "cpu_seconds_per_gb", gb);
        else
            gj_null(js, "cpu_seconds_per_gb");
        gj_u64(js, "data_path_threads", h->threads);
        gj_dbl(js, "data_path_thread_cpu_seconds", h->thread_s);
        if (share >= 0)
            gj_dbl(js, "data_path_thread_cpu_share", share);
        else
            gj_null(js, "data_path_thread_cpu_share");
        gj_u64(js, "staging_high_water_bytes", h->staging_hwm);
        gj_u64(js, "staging_bytes", h->staging_now);
        gj_u64(js, "staging_total_bytes", h->staging_total);
        gj_u64(js, "resident_high_water_bytes", h->rss_hwm);
        gj_u64(js, "locked_high_water_bytes", h->locked_hwm);
        gj_u64(js, "pinned_high_water_bytes", h->pinned_hwm);
        gj_u64(js, "samples", h->samples);
    }
    gj_end(js, '}');
}
