/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_v1.c — ncclProfiler_v1 (NCCL 2.23): function, datatype, algorithm and
 * protocol come as NCCL's numbers; the communicator (commHash, name) comes
 * with each Coll and P2p event, not with init.
 */
#include "plugin/abi/prof.h"

#define VERSION 1

static ncclResult_t v1_init(void **context, int *mask)
{
    *context = gt_coll_init(VERSION, 0, 0, NULL, 0, 0, -1, NULL, mask);
    return ncclSuccess;
}

static ncclResult_t v1_start(void *context, void **handle, ncclProfilerEventDescr_v1_t *e)
{
    struct gt_coll_desc d = {.kind = gt_abi_prof_kind(e->type), .parent = e->parentObj};
    if (e->type == ncclProfileColl) {
        d.func = gt_coll_func_from_v1(e->coll.func);
        d.algo = gt_coll_algo_from_v1(e->coll.algo);
        d.proto = gt_coll_proto_from_v1(e->coll.proto);
        d.count = e->coll.count;
        d.type_size = gt_coll_type_size_from_v1(e->coll.datatype);
        d.rank = e->rank;
        d.has_comm = 1;
        d.comm_hash = e->coll.commHash;
        d.comm_name = e->coll.name;
    } else if (e->type == ncclProfileP2p) {
        d.func = gt_coll_func_from_v1(e->p2p.func);
        d.algo = GTR_ALGO_UNKNOWN;
        d.proto = GTR_PROTO_UNKNOWN;
        d.count = e->p2p.count;
        d.type_size = gt_coll_type_size_from_v1(e->p2p.datatype);
        d.rank = e->rank;
        d.has_comm = 1;
        d.comm_hash = e->p2p.commHash;
        d.comm_name = e->p2p.name;
    } else if (e->type == ncclProfileProxyOp) {
        d.pid = e->proxyOp.pid;
    }
    *handle = gt_coll_start(context, &d);
    return ncclSuccess;
}

GT_EXPORT const ncclProfiler_v1_t ncclProfiler_v1 = {
    .name = GT_PROF_NAME,
    .init = v1_init,
    .startEvent = v1_start,
    .stopEvent = gt_abi_prof_stop,
    .recordEventState = gt_abi_prof_state_v1,
    .finalize = gt_abi_prof_finalize,
};
