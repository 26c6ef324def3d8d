/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_nccljoin.h — the JSON of NCCL's log joined to the recorders
 * (tools/lib/nccljoin.h), for verdict --json and summary --json.
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_NCCLJOIN_H
#define GDRTRACE_TOOLS_RENDER_JSON_NCCLJOIN_H

#include "tools/lib/nccljoin.h"
#include "tools/render/json.h"

/* One communicator object's fields (inside an open object), and the
 * "nccl_log" object {files, lines, …, processes: […], unattributed}. */
void gt_nccl_join_json_comm(struct gt_json *js, const struct gt_nj_comm *c);
void gt_nccl_join_json(struct gt_json *js, const struct gt_nccl_join *nj);

#endif /* GDRTRACE_TOOLS_RENDER_JSON_NCCLJOIN_H */
