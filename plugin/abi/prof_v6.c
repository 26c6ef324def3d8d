/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_v6.c — ncclProfiler_v6 (NCCL 2.29 …): v5 with copy-engine events appended:
 * CeColl is counted as its function (NCCL stops it, CeSync and CeBatch on
 * the host once the copies are enqueued, so nothing times it).
 */
#include "plugin/abi/prof.h"

#define VERSION 6

static ncclResult_t v6_init(void **context, uint64_t commId, int *mask, const char *commName,
                            int nNodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    *context =
        gt_coll_init(VERSION, 1, commId, commName, nNodes, nranks, rank, (gt_logger_fn)logfn, mask);
    return ncclSuccess;
}

static ncclResult_t v6_start(void *context, void **handle, ncclProfilerEventDescr_v6_t *e)
{
    struct gt_coll_desc d = {.kind = gt_abi_prof_kind(e->type), .parent = e->parentObj};
    if (e->type == ncclProfileColl) {
        d.func = gt_coll_func_from_name(e->coll.func);
        d.algo = gt_coll_algo_from_name(e->coll.algo);
        d.proto = gt_coll_proto_from_name(e->coll.proto);
        d.count = e->coll.count;
        d.type_size = gt_coll_type_size_from_name(e->coll.datatype);
        d.rank = e->rank;
    } else if (e->type == ncclProfileP2p) {
        d.func = gt_coll_func_from_name(e->p2p.func);
        d.algo = GTR_ALGO_UNKNOWN;
        d.proto = GTR_PROTO_UNKNOWN;
        d.count = e->p2p.count;
        d.type_size = gt_coll_type_size_from_name(e->p2p.datatype);
        d.rank = e->rank;
        d.group = e->p2p.parentGroup; /* timed as the group the application waits for */
    } else if (e->type == ncclProfileGroup) {
        d.kind = GT_COLL_EV_GROUP; /* one kernel plan: its P2p operations' group */
    } else if (e->type == ncclProfileProxyOp) {
        d.pid = e->proxyOp.pid;
    } else if (e->type == ncclProfileKernelCh) {
        d.gpu_ns = e->kernelCh.pTimer;
    } else if (e->type == ncclProfileCeColl) {
        d.kind = GT_COLL_EV_CE; /* a collective on the copy engines: counted */
        d.func = gt_coll_func_from_name(e->ceColl.func);
        d.algo = GTR_ALGO_UNKNOWN;
        d.proto = GTR_PROTO_UNKNOWN;
        d.count = e->ceColl.count;
        d.type_size = gt_coll_type_size_from_name(e->ceColl.datatype);
        d.rank = e->rank;
    }
    *handle = gt_coll_start(context, &d);
    return ncclSuccess;
}

GT_EXPORT const ncclProfiler_v6_t ncclProfiler_v6 = {
    .name = GT_PROF_NAME,
    .init = v6_init,
    .startEvent = v6_start,
    .stopEvent = gt_abi_prof_stop,
    .recordEventState = gt_abi_prof_state_v4,
    .finalize = gt_abi_prof_finalize,
};
