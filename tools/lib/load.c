/* SPDX-License-Identifier: Apache-2.0 */
/*
 * load.c — inputs to the job's model (load.h).  Invariant: whatever could not
 * be read or folded, the job left behind is a valid one (at worst empty), so
 * every renderer can run on it.
 */
#include "tools/lib/load.h"

#include <stdio.h>

static int load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j);

int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j)
{
    int rc = load_job(paths, n, in, j);
    j->empty_why[0] = '\0';
    if (!j->nrec)
        gt_inputs_empty_cause(in, j->empty_why, sizeof(j->empty_why));
    return rc;
}

static int load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j)
{
    if (in->fold) {
        if (gt_job_begin(j)) {
            fprintf(stderr, "gdrtrace: out of memory building the report\n");
            in->fold = NULL;
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        in->fold = j;
        int bad = gt_inputs_load(in, paths, n);
        in->fold = NULL;
        if (in->fold_failed || gt_job_finish(j, in->recs, in->n)) {
            if (!in->fold_failed)
                fprintf(stderr, "gdrtrace: out of memory building the report\n");
            gt_job_free(j);
            gt_job_build(j, NULL, 0);
            return GT_EXIT_INPUT;
        }
        return bad ? GT_EXIT_INPUT : 0;
    }
    int bad = gt_inputs_load(in, paths, n);
    if (gt_job_build(j, in->recs, in->n)) {
        fprintf(stderr, "gdrtrace: out of memory building the report\n");
        return GT_EXIT_INPUT;
    }
    return bad ? GT_EXIT_INPUT : 0;
}
