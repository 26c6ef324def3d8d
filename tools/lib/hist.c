/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist.c — quantiles and merging of struct gtr_hist for the reader (see
 * hist.h); the bucket formula itself lives in common/hist.h only.
 */
#include "tools/lib/hist.h"

uint64_t gt_hist_total(const struct gtr_hist *h)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        t += h->buckets[i];
    return t;
}

uint64_t gt_hist_quantile(const struct gtr_hist *h, double q)
{
    /* NaN and out-of-range q (a hostile caller cannot pass one, but keep the
     * contract total) are clamped by gt_hist_percentile. */
    return gt_hist_percentile(h->buckets, h->min_ns, h->max_ns, q * 100.0);
}

void gt_hist_merge(struct gtr_hist *dst, const struct gtr_hist *src)
{
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->count && src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->count && src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
}
