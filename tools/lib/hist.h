/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist.h — reader-side arithmetic on the recorder's log-linear histograms.
 * Bucket index, bounds and percentiles come from the writer's own pure
 * header (common/hist.h), so reader and writer can never disagree on the
 * bucket formula; this file adds what only the reader needs (quantiles of a
 * struct gtr_hist, merging histograms across processes).  Pure functions,
 * safe on any bucket contents: percentiles use the buckets' own total, so a
 * live snapshot whose count raced ahead stays self-consistent.
 */
#ifndef GDRTRACE_TOOLS_HIST_H
#define GDRTRACE_TOOLS_HIST_H

#include <stdint.h>

#include "gdrtrace/recorder_format.h"
#include "common/hist.h"

/* q in [0,1]: gt_hist_percentile() of h (nearest rank, bucket midpoint,
 * min_ns / max_ns exactly for the first / last rank, relative error <= 1/32);
 * 0 when empty. */
uint64_t gt_hist_quantile(const struct gtr_hist *h, double q);
/* Adds src into dst (count, sum, buckets; min/max kept exact). */
void gt_hist_merge(struct gtr_hist *dst, const struct gtr_hist *src);
/* Sum of bucket counts (may differ from h->count while a writer is live). */
uint64_t gt_hist_total(const struct gtr_hist *h);

#endif
