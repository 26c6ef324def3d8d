/* SPDX-License-Identifier: Apache-2.0 */
/*
 * next.h — the one next step for a job's outcome, as verdict and the NCCL
 * log's join print it; docs/runbook-gates.md maps the gates it names.
 */
#ifndef GDRTRACE_TOOLS_RENDER_NEXT_H
#define GDRTRACE_TOOLS_RENDER_NEXT_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/model.h"

/*! gt_report_next() : ind, then "next: ...": the one next step for the outcome of
 *  job j (its overall verdict; no recorder: NO-DATA) read from paths (the
 *  command's PATH arguments, none: $GDRTRACE_DIR), wrapped to GT_REPORT_COLS.
 *  gt_next_step() : the same text without "next: ". */
void gt_report_next(FILE *f, const char *ind, const struct gt_job *j, char **paths, int npaths);
void gt_next_step(const struct gt_job *j, char **paths, int npaths, char *buf, size_t n);

#endif
