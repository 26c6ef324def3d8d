/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab_tables.h — diff's method mix and latency tables (text).
 */
#ifndef GDRTRACE_TOOLS_RENDER_AB_TABLES_H
#define GDRTRACE_TOOLS_RENDER_AB_TABLES_H

#include <stdio.h>

#include "tools/lib/model.h"

/* The method mix (counts and shares), fallbacks by reason, errors. */
void gt_ab_print_mix(FILE *f, const struct gtr_comm *A, const struct gtr_comm *B);
/* p50/p95/p99/max per operation with B-A and B/A, and the send/recv legend. */
void gt_ab_print_latency(FILE *f, const struct gtr_comm *A, const struct gtr_comm *B);

#endif
