/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_verdict.h — `gdrtrace verdict --json`: the document's keys, from the
 * job's model and the command's results (the exit code, --expect's outcome,
 * the next step), which the command computes.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_VERDICT_H
#define GDRTRACE_TOOLS_RENDER_JSON_VERDICT_H

#include <stdio.h>

#include "tools/lib/model.h"
#include "tools/lib/nccljoin.h"

struct gt_verdict_doc {
    const struct gt_job *j;
    const struct gt_nccl_join *nj; /* NCCL's log joined, or NULL */
    /* each communicator's evidence (nj's when joined, else j's), with
     * NCCL's own view appended; NULL: their own why */
    const char *const *why;
    int code;       /* the whole input's verdict (GT_V_*) */
    int expect;     /* --expect's GT_V_*, -1 without it */
    int expect_met; /* matched, and not refused as emulated */
    const char *next;
    int unreadable; /* inputs and logs that could not be read */
    int exit_code;
};

void gt_json_verdict(FILE *f, const struct gt_verdict_doc *d);

#endif
