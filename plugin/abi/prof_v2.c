/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_v2.c — ncclProfiler_v2 (NCCL 2.24): names as strings; the communicator (commHash, name)
 * comes with each Coll and P2p event, not with init.
 */
#include "plugin/abi/prof.h"

#define VERSION 2

static ncclResult_t v2_init(void **context, int *mask)
{
    *context = gt_coll_init(VERSION, 0, 0, NULL, 0, 0, -1, NULL, mask);
    return ncclSuccess;
}

static ncclResult_t v2_start(void *context, void **handle, ncclProfilerEventDescr_v2_t *e)
{
    struct gt_coll_desc d = {.kind = gt_abi_prof_kind(e->type), .parent = e->parentObj};
    if (e->type == ncclProfileColl) {
        d.func = gt_coll_func_from_name(e->coll.func);
        d.algo = gt_coll_algo_from_name(e->coll.algo);
        d.proto = gt_coll_proto_from_name(e->coll.proto);
        d.count = e->coll.count;
        d.type_size = gt_coll_type_size_from_name(e->coll.datatype);
        d.rank = e->rank;
        d.has_comm = 1;
        d.comm_hash = e->coll.commHash;
        d.comm_name = e->coll.name;
    } else if (e->type == ncclProfileP2p) {
        d.func = gt_coll_func_from_name(e->p2p.func);
        d.algo = GTR_ALGO_UNKNOWN;
        d.proto = GTR_PROTO_UNKNOWN;
        d.count = e->p2p.count;
        d.type_size = gt_coll_type_size_from_name(e->p2p.datatype);
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

GT_EXPORT const ncclProfiler_v2_t ncclProfiler_v2 = {
    .name = GT_PROF_NAME,
    .init = v2_init,
    .startEvent = v2_start,
    .stopEvent = gt_abi_prof_stop,
    .recordEventState = gt_abi_prof_state_v1,
    .finalize = gt_abi_prof_finalize,
};
