/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof.h — helpers shared by the ncclProfiler_vN adapters (prof_vN.c).
 *
 * Each adapter only translates its version's descriptor into a
 * struct gt_coll_desc and calls the collective recorder (shim/coll.h); stop
 * and finalize are the same for every version.  Nothing here fails NCCL:
 * every event function returns ncclSuccess (coll.h, C4).
 */
#ifndef GDRTRACE_ABI_PROF_H
#define GDRTRACE_ABI_PROF_H

#include "nccl/profiler.h"
#include "plugin/abi/abi.h"
#include "shim/coll.h"

/* The profiler's name in NCCL's log ("Loaded gdrtrace"). */
#define GT_PROF_NAME "gdrtrace"

ncclResult_t gt_abi_prof_stop(void *handle);
ncclResult_t gt_abi_prof_finalize(void *ctx);
/* v4+: a KernelCh's GPU end time; other states are ignored. */
ncclResult_t gt_abi_prof_state_v4(void *handle, ncclProfilerEventState_t state,
                                  ncclProfilerEventStateArgs_v4_t *args);
/* v1-v3 record nothing from states. */
ncclResult_t gt_abi_prof_state_v1(void *handle, ncclProfilerEventState_t state,
                                  ncclProfilerEventStateArgs_v1_t *args);

/* The kind of an event type bit (all versions number them alike). */
static inline int gt_abi_prof_kind(uint64_t type)
{
    if (type == ncclProfileColl || type == ncclProfileP2p)
        return GT_COLL_EV_OP;
    if (type == ncclProfileProxyOp)
        return GT_COLL_EV_PROXYOP;
    if (type == ncclProfileKernelCh)
        return GT_COLL_EV_KERNELCH;
    return GT_COLL_EV_OTHER;
}

#endif
