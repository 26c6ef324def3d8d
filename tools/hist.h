/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist.h — reader-side arithmetic on the recorder's log-linear histograms
 * (bucket formula documented in include/gdrtrace/recorder_format.h).
 * Pure functions, no state, safe on any bucket contents (a live writer may
 * have bumped count and the buckets at slightly different moments, so
 * percentiles use the buckets' own total).
 */
#ifndef GDRTRACE_TOOLS_HIST_H
#define GDRTRACE_TOOLS_HIST_H

#include <stdint.h>

#include "gdrtrace/recorder_format.h"

/* Smallest value (ns) that falls into bucket idx; idx < GTR_HIST_BUCKETS. */
uint64_t gt_hist_bucket_lo(unsigned idx);
/* One past the largest value (ns) of bucket idx (the last bucket: UINT64_MAX). */
uint64_t gt_hist_bucket_hi(unsigned idx);
/* Bucket index of value v (ns), as the writer computes it. */
unsigned gt_hist_index(uint64_t v);
/* q in [0,1]: nearest-rank quantile: the midpoint of the bucket holding the
 * ceil(q*total)-th value (min_ns / max_ns exactly for the first / last rank),
 * clamped to [min_ns, max_ns]; 0 when empty.  Relative error <= 1/32. */
uint64_t gt_hist_quantile(const struct gtr_hist *h, double q);
/* Adds src into dst (count, sum, buckets; min/max kept exact). */
void gt_hist_merge(struct gtr_hist *dst, const struct gtr_hist *src);
/* An empty histogram (min_ns = UINT64_MAX). */
void gt_hist_init(struct gtr_hist *h);
/* Sum of bucket counts (may differ from h->count while a writer is live). */
uint64_t gt_hist_total(const struct gtr_hist *h);

#endif
