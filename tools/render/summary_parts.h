/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary_parts.h — the sections of summary's text, one file each, that
 * summary.c puts in order; private to tools/render/summary*.c.
 *   summary_job.c    the compact report's job lines (software, ranks, owner,
 *                    node tally, registrations, fates)
 *   summary_comms.c  the compact report's communicators and the processes
 *                    that differ from their communicator's majority
 *   summary_proc.c   --full's section of one process, and a communicator's
 *                    counts (shared with --full's communicators across processes)
 */
#ifndef GDRTRACE_TOOLS_RENDER_SUMMARY_PARTS_H
#define GDRTRACE_TOOLS_RENDER_SUMMARY_PARTS_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/model.h"

#define GT_SUM_NCCL_UNKNOWN_WHY "ncclGetVersion not visible to the plugin when its recorder opened"

/* v, or "?" when negative. */
const char *gt_sum_fmt_int(int v, char *buf, size_t n);
/* NCCL's version code as M.m.p, "?" when unknown. */
const char *gt_sum_fmt_nccl(int v, char *buf, size_t n);
/* Why rank (which 0), local rank (1) or world size (2) of r is unknown. */
void gt_sum_rank_unknown_why(const struct gt_recfile *r, int which, char *buf, size_t n);

/* The compact report's job lines. */
void gt_sum_job(FILE *f, const struct gt_job *j);
/* The compact report's "== communicators" (flags: GT_REPORT_RANKS). */
void gt_sum_comms(FILE *f, const struct gt_job *j, int flags);
/* A communicator's registrations, fallbacks, errors, connections, traffic
 * and latency, each line starting with ind (flags: GT_REPORT_BARS). */
void gt_sum_comm_body(FILE *f, const struct gtr_comm *c, const char *ind, int flags);

#endif
