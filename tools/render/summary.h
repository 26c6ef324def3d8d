/* SPDX-License-Identifier: Apache-2.0 */
/*
 * summary.h — the summary report's text, shared by `summary` and `watch`:
 * compact or --full, from the job's model.  Its JSON is json_summary.h; the
 * wrapping and width every text renderer shares are text.h.
 */
#ifndef GDRTRACE_TOOLS_REPORT_H
#define GDRTRACE_TOOLS_REPORT_H

#include <stdio.h>

#include "tools/lib/model.h"
#include "tools/render/text.h"

#define GT_REPORT_BARS 0x1   /* draw histograms */
#define GT_REPORT_EVENTS 0x2 /* list the recent control events */
#define GT_REPORT_FULL 0x4   /* per node, per process and per communicator detail */
#define GT_REPORT_RANKS 0x8  /* the compact report with every process of each communicator */

#define GT_REPORT_LIST_MAX 16 /* the compact report names at most this many of a kind */

void gt_report_text(FILE *f, const struct gt_job *j, int flags);
/* The same, --full's process sections given already written: procs[i] is
 * recorder j->recs[i]'s gt_report_process() text (NULL: nothing), so that
 * each recorder can be written while it is whole and then folded. */
void gt_report_text_procs(FILE *f, const struct gt_job *j, int flags, char *const *procs);
/* --full's section of one process: identity, devices, settings, each
 * communicator in detail and, with GT_REPORT_EVENTS, its recent events. */
void gt_report_process(FILE *f, const struct gt_recfile *r, int flags);

#endif
