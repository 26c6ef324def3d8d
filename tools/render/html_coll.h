/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_coll.h — `gdrtrace report`'s collective section (format 1.6): per
 * communicator the table of tools/lib/coll.h and one latency histogram per
 * function (all sizes, a bar per power of two of ns).  Keeps html.h's
 * invariants: every recorder string through gt_html_escape(), inline SVG
 * only, deterministic.
 */
#ifndef GDRTRACE_TOOLS_HTML_COLL_H
#define GDRTRACE_TOOLS_HTML_COLL_H

#include <stdio.h>

#include "tools/lib/model.h"

/* The section for run j; nothing at all when no recorder has the
 * collective sections. */
void gt_html_coll_section(FILE *f, const struct gt_job *j);

/* `report --baseline`: per function either run reported, the two runs'
 * latency distributions overlaid (every communicator merged; each run's
 * share of its timed operations per power of two of ns, so runs of
 * different lengths compare) with each run's p50/p95/p99 and count.
 * Nothing when neither run has the collective sections; a run without them
 * is named as such. */
void gt_html_coll_overlay(FILE *f, const struct gt_job *a, const struct gt_job *b);

#endif
