/* SPDX-License-Identifier: Apache-2.0 */
/*
 * load.h — the one way a command turns its PATH arguments into the job's
 * model: read the inputs (tools/lib/inputs.h) and build the job
 * (tools/lib/model.h), folding each recorder as it is read when the inputs
 * ask for it (in->fold), so that renderers get a model and never an input.
 */
#ifndef GDRTRACE_TOOLS_LOAD_H
#define GDRTRACE_TOOLS_LOAD_H

#include "tools/lib/inputs.h"
#include "tools/lib/model.h"

/*! gt_load_job() : loads inputs and builds the job; prints problems.  When
 *  nothing was read, j->empty_why says why.  Returns 0, or GT_EXIT_INPUT when
 *  something could not be read (the rest is loaded). */
int gt_load_job(char **paths, int n, struct gt_inputs *in, struct gt_job *j);

#endif
