/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_summary_nccl.h — `gdrtrace summary --json --nccl-log`: the keys of
 * NCCL's log joined (nccl_log, nccl_communicators, nccl_verdict), written
 * at the end of summary's document (gt_report_json_procs's extra hook).
 */
#ifndef GDRTRACE_TOOLS_RENDER_JSON_SUMMARY_NCCL_H
#define GDRTRACE_TOOLS_RENDER_JSON_SUMMARY_NCCL_H

#include "tools/render/json.h"

/* arg: the const struct gt_nccl_join * (the hook's argument) */
void gt_json_summary_nccl(struct gt_json *js, const void *arg);

#endif
