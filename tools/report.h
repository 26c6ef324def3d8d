/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.h — the summary report (text and JSON), shared by `summary` and
 * `watch`, plus the helpers every subcommand uses for its options.
 */
#ifndef GDRTRACE_TOOLS_REPORT_H
#define GDRTRACE_TOOLS_REPORT_H

#include <stdio.h>

#include "tools/inputs.h"
#include "tools/json.h"
#include "tools/model.h"

#define GT_REPORT_BARS 0x1   /* draw histograms */
#define GT_REPORT_EVENTS 0x2 /* list the recent control events */

void gt_report_text(FILE *f, const struct gt_job *j, int flags);
void gt_report_json(struct gt_json *js, const struct gt_job *j);

/* Pieces reused by other commands. */
void gt_report_hist_bars(FILE *f, const struct gtr_hist *h, const char *indent, int width);
void gt_json_identity(struct gt_json *js, const struct gt_recfile *r);
void gt_json_comm_counts(struct gt_json *js, const struct gtr_comm *c);
void gt_json_latency(struct gt_json *js, const struct gtr_comm *c);

/* Loads inputs and builds the job; prints problems.  Returns 0, or
 * GT_EXIT_INPUT when something could not be read (the rest is loaded). */
int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j);

#endif
