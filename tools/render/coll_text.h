/* SPDX-License-Identifier: Apache-2.0 */
/*
 * coll_text.h — the collective model (tools/lib/coll.h) as text.
 */
#ifndef GDRTRACE_TOOLS_RENDER_COLL_TEXT_H
#define GDRTRACE_TOOLS_RENDER_COLL_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/lib/coll.h"

/* summary: "== collectives" with each communicator's table, then the
 * absent reasons; nothing when m is NULL.  bars: each function's latency
 * histogram. */
void gt_coll_text(FILE *f, const struct gt_coll_model *m, int bars);
/* verdict's evidence for a communicator: "NCCL: rank 0,1 of 2 on 2 nodes;
 * AllReduce x120 p50 1.2ms" or the reason metrics are absent; "" when the
 * recorders predate collective metrics. */
void gt_coll_evidence(const struct gt_coll_model *m, uint64_t comm_id, char *buf, size_t n);

#endif
