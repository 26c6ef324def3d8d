/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_ls.h — `gdrtrace ls --json`: one object per recorder, from the rows
 * `ls` keeps of each (identity, state, owner, size, fate).
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_LS_H
#define GDRTRACE_TOOLS_RENDER_JSON_LS_H

#include <stddef.h>
#include <stdio.h>

#include "tools/lib/model.h"

/* rows[0..n) as listed */
void gt_json_ls(FILE *f, const struct gt_ls_row *rows, size_t n);

#endif
