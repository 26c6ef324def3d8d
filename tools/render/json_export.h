/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_export.h — `gdrtrace export --json`: the merged metric set
 * (tools/render/prom.h) as {"metrics": [{name, labels, value}, ...]}.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_EXPORT_H
#define GDRTRACE_TOOLS_RENDER_JSON_EXPORT_H

#include <stdio.h>

#include "tools/render/prom.h"

/* k after gt_prom_merge() */
void gt_json_export(FILE *f, const struct gt_prom *k);

#endif
