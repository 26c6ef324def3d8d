/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ab_text.h — the A/B's three groups (tools/lib/ab.h) as text: diff's table
 * and conclusion, and summary's view of one job.
 */
#ifndef GDRTRACE_TOOLS_RENDER_AB_TEXT_H
#define GDRTRACE_TOOLS_RENDER_AB_TEXT_H

#include <stdio.h>

#include "tools/lib/ab.h"

/* The three groups as a table, then "conclusion: ...". */
void gt_ab_print(FILE *f, const struct gt_ab *ab);

/* summary's view: the three groups for the job, per node and per
 * communicator (the largest GT_AB_SUMMARY_COMMS by bytes unless `all`);
 * nothing at all when no recorder has a host section, so older runs print
 * as before. */
#define GT_AB_SUMMARY_COMMS 8
void gt_ab_summary_text(FILE *f, const struct gt_job *j, int all);

#endif
