/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ls.h — `gdrtrace ls --json`: one object per recorder, from the
 * recorders as read (reduced to their identity) and their fates.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_LS_H
#define GDRTRACE_TOOLS_RENDER_JSON_LS_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/model.h"

/* recs[i]'s fate is fates[i], NULL when it has none */
void gt_json_ls(FILE *f, const struct gt_recfile *recs, struct gt_fate *const *fates, size_t n);

#endif
