/* SPDX-License-Identifier: Apache-2.0 */
/*
 * html_host.h — `gdrtrace report`'s host-pressure section: bars of the
 * host-pressure figures (tools/lib/hostp.h) beside the verdict grid, A and B
 * side by side with each delta's noise mark and the A/B's conclusion
 * (tools/lib/ab.h) when there are two runs.  Keeps html.h's invariants: every
 * recorder string through gt_html_escape(), inline SVG only, deterministic.
 */
#ifndef GDRTRACE_TOOLS_HTML_HOST_H
#define GDRTRACE_TOOLS_HTML_HOST_H

#include <stdio.h>

#include "tools/lib/model.h"

/* The section for run a alone (b NULL) or the A/B; nothing at all when no
 * recorder of either run has a host section (format < 1.5).  0, or ENOMEM. */
int gt_html_host_section(FILE *f, const struct gt_job *a, const struct gt_job *b);

#endif
