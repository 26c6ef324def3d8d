/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist.h — log-linear latency histograms (struct gtr_hist): bucket index and
 * bounds, updates, and percentiles.
 *
 * Pure header, no dependencies beyond recorder_format.h: the reader
 * (tools/) includes it to compute percentiles from a recorder file exactly
 * the way the writer bucketed the values.
 *
 * Bucketing (see recorder_format.h): values below 32 ns are exact (one bucket
 * per ns); from 2^m (m >= 5) on, [2^m, 2^(m+1)) is split into 16 equal
 * buckets of width 2^(m-4), so a bucket spans at most 1/16 = 6.25% of its
 * lower bound.  gt_hist_percentile() returns the bucket's midpoint clamped to
 * [min, max], so its relative error against the true order statistic is at
 * most 1/32 = 3.125% (0 below 32 ns).  Values >= 2^43 ns share the last
 * bucket; count, sum, min and max stay exact for them.
 *
 * Two update flavours, one per writer discipline:
 *  - gt_hist_add_owned(): exactly one thread ever writes this histogram (the
 *    shim guarantees it for data-path histograms, see shim.c).  Relaxed
 *    atomic loads and stores, no read-modify-write instruction: ~1 ns.
 *  - gt_hist_add_shared(): any thread may write.  Relaxed atomic RMWs; exact
 *    under concurrency.
 * Both are exact; readers may read concurrently and see each field
 * individually consistent (a sum may be one update ahead of a count: benign,
 * a live view is a snapshot of moving counters).
 */
#ifndef GDRTRACE_SHIM_HIST_H
#define GDRTRACE_SHIM_HIST_H

#include <stdint.h>

#include "gdrtrace/recorder_format.h"

/* Index of value v (ns) in [0, GTR_HIST_BUCKETS). */
static inline unsigned gt_hist_index(uint64_t v)
{
    if (v < 2 * GTR_HIST_SUB)
        return (unsigned)v;
    unsigned m = 63u - (unsigned)__builtin_clzll(v);
    if (m > GTR_HIST_MAX_LOG2)
        return GTR_HIST_BUCKETS - 1;
    return (m - 3) * GTR_HIST_SUB + (unsigned)((v >> (m - GTR_HIST_SUB_BITS)) - GTR_HIST_SUB);
}

/* Smallest value that lands in bucket idx. */
static inline uint64_t gt_hist_bucket_lo(unsigned idx)
{
    if (idx < 2 * GTR_HIST_SUB)
        return idx;
    unsigned m = idx / GTR_HIST_SUB + 3;
    uint64_t sub = idx % GTR_HIST_SUB;
    return (GTR_HIST_SUB + sub) << (m - GTR_HIST_SUB_BITS);
}

/* One past the largest value of bucket idx (the last bucket is open-ended:
 * UINT64_MAX). */
static inline uint64_t gt_hist_bucket_hi(unsigned idx)
{
    if (idx >= GTR_HIST_BUCKETS - 1)
        return UINT64_MAX;
    return gt_hist_bucket_lo(idx + 1);
}

static inline void gt_hist_add_owned(struct gtr_hist *h, uint64_t v)
{
    unsigned i = gt_hist_index(v);
    /* Single writer: load+store cannot lose an update.  Relaxed atomics keep
     * each 64-bit field untorn for a concurrent reader and tell TSan so. */
    __atomic_store_n(&h->count, __atomic_load_n(&h->count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&h->sum_ns, __atomic_load_n(&h->sum_ns, __ATOMIC_RELAXED) + v,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&h->buckets[i], __atomic_load_n(&h->buckets[i], __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    if (v < __atomic_load_n(&h->min_ns, __ATOMIC_RELAXED))
        __atomic_store_n(&h->min_ns, v, __ATOMIC_RELAXED);
    if (v > __atomic_load_n(&h->max_ns, __ATOMIC_RELAXED))
        __atomic_store_n(&h->max_ns, v, __ATOMIC_RELAXED);
}

static inline void gt_hist_add_shared(struct gtr_hist *h, uint64_t v)
{
    unsigned i = gt_hist_index(v);
    __atomic_fetch_add(&h->count, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->sum_ns, v, __ATOMIC_RELAXED);
    __atomic_fetch_add(&h->buckets[i], 1, __ATOMIC_RELAXED);
    /* min/max: CAS only when this value improves the bound, which stops
     * happening soon after start, so the common case is two plain loads. */
    uint64_t cur = __atomic_load_n(&h->min_ns, __ATOMIC_RELAXED);
    while (v < cur &&
           !__atomic_compare_exchange_n(&h->min_ns, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    cur = __atomic_load_n(&h->max_ns, __ATOMIC_RELAXED);
    while (v > cur &&
           !__atomic_compare_exchange_n(&h->max_ns, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* An empty histogram (min = UINT64_MAX per the format). */
static inline void gt_hist_init(struct gtr_hist *h)
{
    __builtin_memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

/* The p-th percentile (0 <= p <= 100) by nearest rank over `buckets`
 * (GTR_HIST_BUCKETS entries): the midpoint of the bucket holding the
 * ceil(p/100 * total)-th smallest value, clamped to [min_ns, max_ns]; the
 * first and last ranks return min_ns and max_ns themselves.
 * Returns 0 for an empty histogram.  total is computed from the buckets so a
 * live snapshot whose count raced ahead stays self-consistent. */
static inline uint64_t gt_hist_percentile(const uint64_t *buckets, uint64_t min_ns, uint64_t max_ns,
                                          double p)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < GTR_HIST_BUCKETS; i++)
        total += buckets[i];
    if (total == 0)
        return 0;
    if (p < 0)
        p = 0;
    if (p > 100)
        p = 100;
    double r = p / 100.0 * (double)total;
    uint64_t rank = (uint64_t)r;
    if ((double)rank < r)
        rank++;
    if (rank <= 1)
        return min_ns <= max_ns ? min_ns : 0; /* the smallest value is known exactly */
    if (rank >= total)
        return max_ns;
    uint64_t seen = 0;
    unsigned i = 0;
    for (; i < GTR_HIST_BUCKETS; i++) {
        seen += buckets[i];
        if (seen >= rank)
            break;
    }
    uint64_t lo = gt_hist_bucket_lo(i), hi = gt_hist_bucket_hi(i);
    uint64_t est = (hi == UINT64_MAX) ? lo : lo + (hi - lo) / 2;
    if (hi - lo == 1)
        est = lo; /* exact bucket */
    if (est < min_ns)
        est = min_ns;
    if (est > max_ns)
        est = max_ns;
    return est;
}

#endif /* GDRTRACE_SHIM_HIST_H */
