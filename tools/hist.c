/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist.c — bucket bounds and quantiles of struct gtr_hist (see hist.h).
 * Invariant: bucket_lo(index(v)) <= v < bucket_hi(index(v)) for every v
 * below the last bucket.  Semantics match shim/hist.h (the writer's), so the
 * reader reports the same percentile the writer's own tests expect.
 */
#include "tools/hist.h"

#include <string.h>

unsigned gt_hist_index(uint64_t v)
{
    if (v < GTR_HIST_SUB)
        return (unsigned)v;
    unsigned m = 63u - (unsigned)__builtin_clzll(v);
    if (m > GTR_HIST_MAX_LOG2)
        return GTR_HIST_BUCKETS - 1;
    return (m - 3) * GTR_HIST_SUB + (unsigned)((v >> (m - 4)) - GTR_HIST_SUB);
}

uint64_t gt_hist_bucket_lo(unsigned idx)
{
    if (idx < GTR_HIST_SUB)
        return idx;
    unsigned m = idx / GTR_HIST_SUB + 3, sub = idx % GTR_HIST_SUB;
    return (uint64_t)(GTR_HIST_SUB + sub) << (m - 4);
}

uint64_t gt_hist_bucket_hi(unsigned idx)
{
    if (idx >= GTR_HIST_BUCKETS - 1)
        return UINT64_MAX;
    return gt_hist_bucket_lo(idx + 1);
}

uint64_t gt_hist_total(const struct gtr_hist *h)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        t += h->buckets[i];
    return t;
}

uint64_t gt_hist_quantile(const struct gtr_hist *h, double q)
{
    uint64_t total = gt_hist_total(h);
    if (total == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    /* nearest rank, 1-based: ceil(q * total) */
    double want = q * (double)total;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want)
        rank++;
    uint64_t lo_ok = h->min_ns <= h->max_ns;
    if (rank <= 1)
        return lo_ok ? h->min_ns : 0; /* the smallest value is known exactly */
    if (rank >= total)
        return h->max_ns;
    uint64_t cum = 0;
    unsigned i = 0;
    for (; i < GTR_HIST_BUCKETS - 1; i++) {
        cum += h->buckets[i];
        if (cum >= rank)
            break;
    }
    uint64_t lo = gt_hist_bucket_lo(i), hi = gt_hist_bucket_hi(i);
    /* the bucket's midpoint: at most 1/32 from any value in it */
    uint64_t v = hi == UINT64_MAX ? lo : hi - lo == 1 ? lo : lo + (hi - lo) / 2;
    if (lo_ok && v < h->min_ns)
        v = h->min_ns;
    if (v > h->max_ns)
        v = h->max_ns;
    return v;
}

void gt_hist_init(struct gtr_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
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
