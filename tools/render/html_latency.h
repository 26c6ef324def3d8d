/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_latency.h — `gdrtrace report`'s latency section: one figure per
 * operation timed, the density of every communicator's summed histogram on
 * a log axis, run a alone or a and b overlaid.  Keeps html.h's invariants.
 */
#ifndef GDRTRACE_TOOLS_HTML_LATENCY_H
#define GDRTRACE_TOOLS_HTML_LATENCY_H

#include <stdio.h>

#include "tools/lib/model.h"

/* The section's heading, note and figures for a (b: NULL, or the run laid
 * over a).  0, or ENOMEM (then nothing was written). */
int gt_html_latency_section(FILE *f, const struct gt_job *a, const struct gt_job *b);

#endif
