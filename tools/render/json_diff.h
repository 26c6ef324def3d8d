/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_diff.h — `gdrtrace diff --json`: the document's keys, from the two
 * sides' models, the differences found and the runbook's A/B
 * (tools/lib/ab.h), which the command computes.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_DIFF_H
#define GDRTRACE_TOOLS_RENDER_JSON_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "tools/lib/ab.h"
#include "tools/lib/model.h"

/* diff's latency points, text and JSON: p50, p95, p99, max */
#define GT_DIFF_NQ 4
extern const char *const gt_diff_qname[GT_DIFF_NQ];
uint64_t gt_diff_qval(const struct gtr_hist *h, int q);

struct gt_diff_side {
    const char *path;
    size_t nproc;
    const struct gt_job *job;
    const struct gtr_comm *tot; /* summed over every communicator */
    const char *policy_reg;     /* its first recorder's GDRTRACE_REG */
};

struct gt_diff_doc {
    struct gt_diff_side side[2];
    const char (*warn)[512]; /* the differences beyond the registration path */
    int nwarn;
    const struct gt_ab *ab;
};

void gt_json_diff(FILE *f, const struct gt_diff_doc *d);

#endif
