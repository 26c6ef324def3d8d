/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prof_common.c — the parts of the ncclProfiler_vN tables that every
 * version shares (prof.h).
 */
#include "plugin/abi/prof.h"

ncclResult_t gt_abi_prof_stop(void *handle)
{
    gt_coll_stop(handle);
    return ncclSuccess;
}

ncclResult_t gt_abi_prof_finalize(void *ctx)
{
    gt_coll_finalize(ctx);
    return ncclSuccess;
}

ncclResult_t gt_abi_prof_state_v4(void *handle, ncclProfilerEventState_t state,
                                  ncclProfilerEventStateArgs_v4_t *args)
{
    if (state == ncclProfilerKernelChStop && args)
        gt_coll_kernel_end(handle, args->kernelCh.pTimer);
    return ncclSuccess;
}

ncclResult_t gt_abi_prof_state_v1(void *handle, ncclProfilerEventState_t state,
                                  ncclProfilerEventStateArgs_v1_t *args)
{
    (void)handle;
    (void)state;
    (void)args;
    return ncclSuccess;
}
