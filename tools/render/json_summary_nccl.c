/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_summary_nccl.c — summary --json's keys of NCCL's log joined
 * (docs/reader.md): "nccl_log" (json_nccljoin.c), each communicator NCCL
 * created with its verdict, and the whole input's verdict with the log.
 */
#include "tools/render/json_summary_nccl.h"

#include "tools/lib/model.h"
#include "tools/lib/nccljoin.h"
#include "tools/render/json_nccljoin.h"

void gt_json_summary_nccl(struct gt_json *js, const void *arg)
{
    const struct gt_nccl_join *nj = arg;
    gt_nccl_join_json(js, nj);
    gj_arr(js, "nccl_communicators");
    for (size_t i = 0; i < nj->ncomm; i++) {
        gj_obj(js, NULL);
        gj_str(js, "comm", nj->comms[i].label);
        gj_str(js, "verdict", gt_nj_label(&nj->comms[i]));
        gj_str(js, "why", nj->comms[i].why);
        gt_nccl_join_json_comm(js, &nj->comms[i]);
        gj_end(js, '}');
    }
    gj_end(js, ']');
    gj_obj(js, "nccl_verdict");
    gj_str(js, "code", gt_verdict_name(nj->code));
    gj_i64(js, "exit", gt_verdict_exit(nj->code));
    gj_str(js, "why", nj->why);
    gj_end(js, '}');
}
