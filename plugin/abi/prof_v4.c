/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_v4.c — ncclProfiler_v4 (NCCL 2.26, 2.27): init names the communicator (commHash after
 * commName); KernelCh events carry GPU timestamps.
 */
#include "plugin/abi/prof.h"

#define VERSION 4

static ncclResult_t v4_init(void **context, int *mask, const char *commName, uint64_t commHash,
                            int nNodes, int nranks, int rank, ncclDebugLogger_t logfn)
{
    *context = gt_coll_init(VERSION, 1, commHash, commName, nNodes, nranks, rank,
                            (gt_logger_fn)logfn, mask);
    return ncclSuccess;
}

static ncclResult_t v4_start(void *context, void **handle, ncclProfilerEventDescr_v4_t *e)
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
    } else if (e->type == ncclProfileProxyOp) {
        d.pid = e->proxyOp.pid;
    } else if (e->type == ncclProfileKernelCh) {
        d.gpu_ns = e->kernelCh.pTimer;
    }
    *handle = gt_coll_start(context, &d);
    return ncclSuccess;
}

GT_EXPORT const ncclProfiler_v4_t ncclProfiler_v4 = {
    .name = GT_PROF_NAME,
    .init = v4_init,
    .startEvent = v4_start,
    .stopEvent = gt_abi_prof_stop,
    .recordEventState = gt_abi_prof_state_v4,
    .finalize = gt_abi_prof_finalize,
};
